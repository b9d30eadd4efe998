# frozen_string_literal: true

module Rackbench
  module Trial
    module Identity
      # Reads, from outside, which malloc a live process has mapped: its
      # /proc/PID/maps, as the runner sees it when it checks the server.
      # The agent reports the same from /proc/self/maps when the process
      # starts (agent/identity.rb, whose MALLOCS these patterns repeat: the
      # agent loads nothing of rackbench); this reading is the runner's own,
      # taken after the server is ready, and independent of the agent.
      module Maps
        MALLOCS = { "jemalloc" => /\Alibjemalloc\b/, "tcmalloc" => /\Alibtcmalloc/,
                    "mimalloc" => /\Alibmimalloc\b/ }.freeze

        module_function

        # { "name" => "jemalloc", "path" => mapped file } for the first
        # replacement allocator mapped into pid, { "name" => "glibc",
        # "path" => nil } when none is, nil when the maps cannot be read.
        def malloc(pid, proc_dir:)
          paths = mapped_files(pid, proc_dir: proc_dir)
          return nil unless paths

          MALLOCS.each do |name, pattern|
            path = paths.find { |file| File.basename(file).match?(pattern) }
            return { "name" => name, "path" => path } if path
          end
          { "name" => "glibc", "path" => nil }
        end

        # The files mapped into pid (absolute paths, in maps order), or nil.
        def mapped_files(pid, proc_dir:)
          File.foreach(File.join(proc_dir, pid.to_s, "maps")).filter_map do |line|
            path = line.split(" ", 6)[5].to_s.strip
            path if path.start_with?("/")
          end.uniq
        rescue SystemCallError, IOError
          nil
        end
      end
    end
  end
end
