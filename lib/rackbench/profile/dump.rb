# frozen_string_literal: true

module Rackbench
  module Profile
    # One server process's StackProf dump (agent/profile.rb): Marshal of
    # StackProf.results with raw: true. Read without the stackprof gem:
    # the dump is plain Hashes, Arrays, Symbols and numbers.
    #
    # Its raw samples are a flat Array: for each distinct run of samples,
    # the stack's depth, the frame ids from the outermost to the leaf,
    # then how many consecutive samples had that stack.
    module Dump
      module_function

      # The Merged profile of one dump file (path), for process pid.
      # Raises Profile::Error when the file is not a StackProf dump.
      def read(path, pid: File.basename(path).to_i)
        # Marshal only ever loads the files the trial's own server processes
        # wrote into the trial's directory.
        results = File.open(path, "rb") { |f| Marshal.load(f) } # rubocop:disable Security/MarshalLoad
        from_results(results, pid: pid)
      rescue TypeError, ArgumentError, EOFError => e
        raise Error, "#{path} is not a StackProf dump (#{e.message})"
      rescue Error => e
        raise Error, "#{path}: #{e.message}"
      end

      # The Merged profile of StackProf.results (a Hash with Symbol keys).
      def from_results(results, pid: nil)
        raise Error, "not StackProf results (#{results.class})" unless results.is_a?(Hash)

        # StackProf leaves :raw out when it took no sample (an idle master).
        unless results[:raw].is_a?(Array) || results[:samples].to_i.zero?
          raise Error, "StackProf results without raw samples (start it with raw: true)"
        end

        frames = results.fetch(:frames)
        by_address = {}
        by_identity = {}
        names = []
        # Two addresses may name one frame (the same name, file and line):
        # one frame then, as when merging.
        id_of = lambda do |address|
          by_address[address] ||= begin
            frame = frames[address] || {}
            named = { "name" => frame[:name].to_s, "file" => frame[:file].to_s, "line" => frame[:line] }
            by_identity[named.values] ||= (names << named).size - 1
          end
        end
        stacks = Hash.new(0)
        raw = results[:raw] || []
        i = 0
        while i < raw.size
          depth = raw[i]
          stack = raw[i + 1, depth].map(&id_of)
          stacks[stack] += raw[i + 1 + depth]
          i += depth + 2
        end
        samples = stacks.values.sum
        Merged.new(tool: "stackprof", mode: results[:mode].to_s, interval: results[:interval], frames: names,
                   stacks: stacks.map { |stack, count| [stack, count] },
                   processes: [{ "pid" => pid, "samples" => samples, "cpu_us" => results[:rackbench_cpu_us] }.compact])
      end
    end
  end
end
