# frozen_string_literal: true

require "json"

module Rackbench
  module Profile
    # One server process's Vernier profile (agent/profile.rb writes
    # inside/<pid>.vernier.json): frames as [name, file, line] and stacks as
    # [[frame indices, outermost first], samples], already the shape of a
    # Merged profile. Read as JSON, never evaluated. The allocation census
    # (agent/allocation_census.rb) writes the same shape (ObjspaceDump).
    module VernierDump
      SUFFIX = ".vernier.json"

      module_function

      # The Merged profile of one dump file (path), for process pid.
      # Raises Profile::Error when the file is not a dump of ours by tool.
      def read(path, pid: File.basename(path).to_i, tool: "vernier")
        data = JSON.parse(File.read(path))
        raise Error, "#{path} is not a #{tool} dump (tool #{data["tool"].inspect})" unless data["tool"] == tool

        frames = data.fetch("frames").map { |name, file, line| { "name" => name, "file" => file, "line" => line } }
        stacks = data.fetch("stacks").map { |ids, count| [ids, count] }
        Merged.new(tool: tool, mode: data.fetch("mode"), interval: data.fetch("interval"), frames: frames,
                   stacks: stacks, processes: [{ "pid" => pid, "samples" => stacks.sum { |_, count| count } }])
      rescue JSON::ParserError, KeyError, TypeError, NoMethodError => e
        raise Error, "#{path} is not a #{tool} dump (#{e.message})"
      end
    end
  end
end
