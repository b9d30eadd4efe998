# frozen_string_literal: true

require_relative "rackbench/version"
require_relative "rackbench/errors"

# rackbench: a benchmarking lab for Ruby web stacks. See README.md.
module Rackbench
  autoload :App, File.expand_path("rackbench/apps", __dir__)
  autoload :Apps, File.expand_path("rackbench/apps", __dir__)
  autoload :CLI, File.expand_path("rackbench/cli", __dir__)
  autoload :Duration, File.expand_path("rackbench/duration", __dir__)
  autoload :LoadEngine, File.expand_path("rackbench/load_engine", __dir__)
  autoload :LoadResult, File.expand_path("rackbench/load_result", __dir__)
  autoload :LoadSettings, File.expand_path("rackbench/load_settings", __dir__)
  autoload :LoadSummary, File.expand_path("rackbench/load_summary", __dir__)
  autoload :Experiment, File.expand_path("rackbench/experiment", __dir__)
  autoload :Plan, File.expand_path("rackbench/experiment/plan", __dir__)
  autoload :MachineEnv, File.expand_path("rackbench/machine_env", __dir__)
  autoload :Store, File.expand_path("rackbench/store", __dir__)
end
