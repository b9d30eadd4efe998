# frozen_string_literal: true

require_relative "rackbench/version"
require_relative "rackbench/errors"

# rackbench: a benchmarking lab for Ruby web stacks. See README.md.
module Rackbench
  autoload :CLI, File.expand_path("rackbench/cli", __dir__)
  autoload :Duration, File.expand_path("rackbench/duration", __dir__)
  autoload :LoadEngine, File.expand_path("rackbench/load_engine", __dir__)
  autoload :LoadResult, File.expand_path("rackbench/load_result", __dir__)
  autoload :LoadSettings, File.expand_path("rackbench/load_settings", __dir__)
  autoload :LoadSummary, File.expand_path("rackbench/load_summary", __dir__)
end
