# frozen_string_literal: true

module Rackbench
  module Stats
    # Differences farther than this many robust standard deviations from 0
    # are left out of a series' noise: a step not yet found, a busy night.
    RUN_NOISE_CUTOFF = 4.0

    # The run-to-run noise of a series, in log units (0.01 is about 1%),
    # from +diffs+: the differences of the log medians of neighbouring runs
    # that no step separates. Each difference holds the noise of two runs,
    # hence the square root of 2.
    #
    # How: a robust scale first (1.4826 times the median absolute
    # difference from 0, MAD_TO_SIGMA), to leave out the differences beyond
    # RUN_NOISE_CUTOFF of it; then the root mean square of the rest. The
    # MAD alone would do, but it wastes most of the data (its efficiency
    # is 37%): from 60 pairs it misses sigma by 20% as often as not, and a
    # threshold of 5 sigma becomes one of 4, which a year of nightly runs
    # crosses by chance. The root mean square of what is left is within 10%.
    #
    # Why neighbours rather than each run's own interval: a run's interval
    # says how well its batches agree, not how far the next run of the same
    # code will land (a boot's memory layout, the machine's week). What a
    # series' neighbours differ by when nothing changed is exactly the
    # noise a step must stand out from: the A/A comparison it ran itself.
    #
    #   Stats.run_noise([0.01, -0.012, 0.004, -0.003]) # => 0.0063...
    def self.run_noise(diffs)
      xs = Check.finite_floats(diffs, "diffs")
      raise ArgumentError, "run_noise needs at least 2 differences, got #{xs.size}" if xs.size < 2

      run_noise_unchecked(xs)
    end

    # Stats.run_noise of Floats already checked (a series' own log
    # differences, computed once per run of a long history).
    def self.run_noise_unchecked(xs)
      run_noise_of_sizes(xs.map(&:abs).sort!)
    end

    # Stats.run_noise from the differences' absolute values, sorted.
    def self.run_noise_of_sizes(sizes)
      h = (sizes.size - 1) * 0.5
      below = h.floor
      middle = below + 1 < sizes.size ? sizes[below] + (h - below) * (sizes[below + 1] - sizes[below]) : sizes[below]
      robust = MAD_TO_SIGMA * middle
      limit = robust.positive? ? RUN_NOISE_CUTOFF * robust : Float::INFINITY
      sum = 0.0
      kept = 0
      sizes.each do |d|
        break if d > limit

        sum += d * d
        kept += 1
      end
      Math.sqrt(sum / kept / 2)
    end
  end
end
