# frozen_string_literal: true

module Rackbench
  module Profile
    # One server process's allocations by class (agent/allocation_census.rb
    # writes inside/<pid>.objspace.json): one frame per class, each a stack
    # of its own with the objects of that class, scaled to the window. The
    # shape of a Vernier dump, read as one.
    module ObjspaceDump
      SUFFIX = ".objspace.json"

      module_function

      def read(path, pid: File.basename(path).to_i)
        VernierDump.read(path, pid: pid, tool: "objspace")
      end
    end
  end
end
