# frozen_string_literal: true

module Rackbench
  module Profile
    # The frames where a profile's samples are: by self (the frame was the
    # leaf: the time spent in its own code) and by total (the frame was
    # anywhere on the stack: its own code and all it called). A recursive
    # frame counts once per sample in total.
    module TopFrames
      # One frame's figures: samples and their share of the profile's.
      Row = Struct.new(:name, :file, :line, :self_samples, :total_samples, :self_share, :total_share,
                       keyword_init: true)

      module_function

      # Every frame of profile (a Merged) as a Row, by :self or :total
      # samples, most first (ties by name); limit rows at most (nil: all).
      def call(profile, by: :self, limit: nil)
        raise ArgumentError, "by must be :self or :total, not #{by.inspect}" unless %i[self total].include?(by)

        self_counts = Hash.new(0)
        total_counts = Hash.new(0)
        profile.stacks.each do |stack, count|
          next if stack.empty?

          self_counts[stack.last] += count
          stack.uniq.each { |frame| total_counts[frame] += count }
        end
        samples = profile.samples
        rows = total_counts.keys.map do |index|
          frame = profile.frames[index]
          Row.new(name: frame["name"], file: frame["file"], line: frame["line"],
                  self_samples: self_counts[index], total_samples: total_counts[index],
                  self_share: share(self_counts[index], samples), total_share: share(total_counts[index], samples))
        end
        key = by == :self ? :self_samples : :total_samples
        sorted = rows.sort_by { |row| [-row[key], row.name] }
        limit ? sorted.first(limit) : sorted
      end

      def share(count, samples)
        samples.zero? ? 0.0 : count.fdiv(samples)
      end
    end
  end
end
