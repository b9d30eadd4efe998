# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # The runner's side of the counting agent (agent/inside.rb): the
      # experiment's `inside` mode, the variables that load the agent into
      # a server, the collection of each process's counts after the window
      # (Collection) and the document stored as the record's +inside+
      # (Document; doc/output.md, "The inside document").
      module Inside
        COUNTING = "counting"
        OFF = "off"
        # Tells the launcher to load agent/inside.rb.
        ENV_VAR = "RACKBENCH_INSIDE"
        COUNTS_SUFFIX = ".counts.json"

        # The experiment's mode; counting for a source that has no such key.
        def self.mode(source)
          source.respond_to?(:inside) ? source.inside : COUNTING
        end

        # The server's variables for mode: the window channel and the agent
        # when it counts; nothing when off, so that an `inside: off` server
        # runs no agent code at all (no watcher thread either): the A/B of
        # bench/agent_overhead.rb measures the whole cost. Another listener
        # of the window (a profiler) sets WindowMarks::ENV_VAR itself.
        def self.env(mode)
          return {} unless mode == COUNTING

          { WindowMarks::ENV_VAR => "1", ENV_VAR => COUNTING }
        end
      end
    end
  end
end

require_relative "inside/document"
require_relative "inside/collection"
