# frozen_string_literal: true

module Rackbench
  module Stats
    # A run whose interval left the band of the runs before it.
    #
    # index :: its position in the series
    # band :: [low, high]: the union of the intervals of the runs since
    #         the previous change point (or the first run), before the
    #         equivalence widening
    # runs :: the indexes of those runs
    # direction :: "up" (the interval lies above the band) or "down"
    ChangePoint = Struct.new(:index, :band, :runs, :direction, keyword_init: true)

    # The change points of a series of runs, in order, from each run's
    # interval of the figure ([low, high], nil for a run without one: too
    # few batches). A run is a change point when its interval lies wholly
    # outside the band of the runs before it: the union of their
    # intervals since the last change point, widened by +equivalence+ on
    # both sides (a shift smaller than the band of negligible ratios is no
    # change). The change point starts the next band. A run without an
    # interval neither moves a band nor starts one.
    #
    # Why the union of intervals: the earlier runs measured revisions that
    # did not move the figure, each with its own interval; a new run whose
    # interval overlaps none of them, not even widened, is unlike every one
    # of them, which a reader can check on the chart. A slow drift that
    # stays within the growing band is not one change and is not marked.
    #
    #   Stats.change_points([[99, 101], [98, 102], [99.5, 100.5], [88, 90]], equivalence: 0.01)
    #   # => [#<ChangePoint index=3, band=[98, 102], runs=[0, 1, 2], direction="down">]
    def self.change_points(intervals, equivalence:)
      Check.within(equivalence, "equivalence", 0, 0.5)
      found = []
      band = nil
      runs = []
      intervals.each_with_index do |ci, i|
        next if ci.nil?

        low, high = Check.finite_floats(ci, "interval")
        raise ArgumentError, "interval #{i} is not [low, high] with low <= high: #{ci.inspect}" unless ci.size == 2 && low <= high

        direction = band && outside_band(ci, band, equivalence)
        if direction
          found << ChangePoint.new(index: i, band: band, runs: runs, direction: direction)
          band = nil
        end
        band = band ? [[band[0], low].min, [band[1], high].max] : [low, high]
        runs = found.last&.index == i ? [i] : runs + [i]
      end
      found
    end

    # "down" when the interval +ci+ ([low, high]) lies wholly below the
    # +band+ ([low, high]) widened by +equivalence+ (a fraction) on both
    # sides, "up" when wholly above, else nil: the test of a change point
    # (Stats.change_points), which a published series' young runs share
    # (Stats::StepDetection).
    def self.outside_band(ci, band, equivalence)
      low, high = ci
      if high < band[0] * (1 - equivalence) then "down"
      elsif low > band[1] * (1 + equivalence) then "up"
      end
    end
  end
end
