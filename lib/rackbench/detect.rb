# frozen_string_literal: true

module Rackbench
  # Time to a verdict (`rackbench run --detect 2%`): a pilot of a few
  # batches measures the noise, the batches each comparison needs for the
  # asked difference follow from it, and the run stops once that many
  # batches are stored (doc/methodology.md, "Time to a verdict").
  #
  # Settings :: what was asked (stored with the run)
  # Decision :: pilot => batches to run, from stored trials only
  # Stopping :: the Runner's hook at batch boundaries
  # Outcome :: the power the finished run achieved, for the report
  module Detect
  end
end

require_relative "detect/settings"
require_relative "detect/decision"
require_relative "detect/stopping"
require_relative "detect/outcome"
