# frozen_string_literal: true

module Rackbench
  module Profile
    # A profile as rackbench keeps it: the distinct stacks sampled, each
    # with how many samples had it, over a table of frames. One process's
    # dump (Dump), a trial's workers merged, or a configuration's trials
    # merged: the same shape, so every report reads one thing.
    #
    # tool :: "stackprof" or "vernier"
    # mode :: "cpu", "wall" or "object"
    # interval :: microseconds between samples (cpu, wall) or allocations per sample (object)
    # frames :: Array of { "name", "file", "line" }, indexed by the stacks
    # stacks :: Array of [frame indices from the outermost to the leaf, samples]
    # processes :: Array of { "pid", "samples" } (and "trial" once merged across trials; "cpu_us", the
    #              process's CPU time over the window, from a StackProf cpu profile): where the samples come from
    class Merged
      attr_reader :tool, :mode, :interval, :frames, :stacks, :processes, :sample_us

      def initialize(tool:, mode:, interval:, frames:, stacks:, processes: [])
        @tool = tool
        @mode = mode
        @interval = interval
        @frames = frames
        @stacks = stacks
        @processes = processes
        @sample_us = measured_sample_us
        freeze
      end

      # Samples in all: the sum over the stacks.
      def samples
        @stacks.sum { |_, count| count }
      end

      # What a sample weighs: "microseconds" of CPU or wall time for those
      # modes, "objects" allocated in object mode.
      def unit
        mode == "object" ? "objects" : "microseconds"
      end

      # The sampled amount, in unit, that count samples stand for: the
      # measured CPU time per sample where there is one (#sample_us), else
      # the interval asked for.
      def weight(count)
        sample_us ? count * sample_us : count * interval.to_i
      end

      # StackProf's cpu mode samples on ITIMER_PROF, which fires at most
      # once per kernel tick of CPU time (every 4 ms at 250 Hz) whatever
      # the interval asked: 100 µs asked gave one sample per 4 ms of CPU
      # here (doc/methodology.md). Its samples are weighed by what they
      # stand for: the CPU time of the processes that gave samples, over
      # their samples. nil for other profiles, and where a process that
      # gave samples has no CPU time measured (a dump of an older agent).
      def measured_sample_us
        return nil unless tool == "stackprof" && mode == "cpu"

        sampled = processes.select { |process| process["samples"].to_i.positive? }
        return nil if sampled.empty? || sampled.any? { |process| !process["cpu_us"].is_a?(Numeric) }

        samples = sampled.sum { |process| process["samples"] }
        sampled.sum { |process| process["cpu_us"] }.fdiv(samples)
      end
      private :measured_sample_us

      def frame_label(index)
        frame = frames[index]
        frame["name"]
      end

      # One profile of this and others (Merged): frames that are the same
      # (name, file, line) become one, identical stacks add up. Raises
      # Profile::Error when they were not taken alike (tool, mode, interval).
      def self.merge(profiles)
        raise Error, "no profiles to merge" if profiles.empty?

        first = profiles.first
        profiles.each do |profile|
          next if [profile.tool, profile.mode, profile.interval] == [first.tool, first.mode, first.interval]

          raise Error, "cannot merge a #{profile.tool} #{profile.mode} profile (interval #{profile.interval}) " \
                       "with a #{first.tool} #{first.mode} one (interval #{first.interval})"
        end
        index = {}
        frames = []
        stacks = Hash.new(0)
        profiles.each do |profile|
          local = profile.frames.map do |frame|
            index[[frame["name"], frame["file"], frame["line"]]] ||= (frames << frame).size - 1
          end
          profile.stacks.each { |stack, count| stacks[stack.map { |i| local[i] }] += count }
        end
        new(tool: first.tool, mode: first.mode, interval: first.interval, frames: frames,
            stacks: stacks.to_a, processes: profiles.flat_map(&:processes))
      end

      # JSON-ready Hash (String keys), read back by .from_h (sample_us is
      # made again from the processes).
      def to_h
        { "tool" => tool, "mode" => mode, "interval" => interval, "sample_us" => sample_us, "samples" => samples,
          "processes" => processes, "frames" => frames, "stacks" => stacks }
      end

      def self.from_h(hash)
        new(tool: hash.fetch("tool"), mode: hash.fetch("mode"), interval: hash.fetch("interval"),
            frames: hash.fetch("frames"), stacks: hash.fetch("stacks"), processes: hash.fetch("processes", []))
      rescue KeyError => e
        raise Error, "not a rackbench profile: #{e.message}"
      end

      # A copy whose processes are tagged with trial (its key), before it
      # is merged with other trials' profiles.
      def tagged(trial)
        Merged.new(tool: tool, mode: mode, interval: interval, frames: frames, stacks: stacks,
                   processes: processes.map { |process| process.merge("trial" => trial) })
      end
    end
  end
end
