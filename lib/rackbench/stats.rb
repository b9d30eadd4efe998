# frozen_string_literal: true

module Rackbench
  # Statistics across batches: pure functions over plain numbers and the
  # engine's latency histograms, no I/O. doc/methodology.md ("Statistics
  # across batches") explains every choice made here.
  #
  # The unit of replication is the batch (one server boot, warmed up,
  # measured), so the lists of numbers these functions take are one value
  # per batch, never one per request.
  module Stats
  end
end

require_relative "stats/check"
require_relative "stats/memo"
require_relative "stats/normal"
require_relative "stats/summary"
require_relative "stats/bootstrap"
require_relative "stats/sample_size"
require_relative "stats/power"
require_relative "stats/comparison"
require_relative "stats/family"
require_relative "stats/student_t"
require_relative "stats/change_points"
require_relative "stats/median_interval"
require_relative "stats/run_noise"
require_relative "stats/step_detection"
require_relative "stats/outliers"
require_relative "stats/trend"
require_relative "stats/latency_histogram"
