# frozen_string_literal: true

require_relative "rackbench/version"
require_relative "rackbench/errors"

# rackbench: a benchmarking lab for Ruby web stacks. See README.md.
module Rackbench
  autoload :App, File.expand_path("rackbench/apps", __dir__)
  autoload :Apps, File.expand_path("rackbench/apps", __dir__)
  autoload :CLI, File.expand_path("rackbench/cli", __dir__)
  autoload :Detect, File.expand_path("rackbench/detect", __dir__)
  autoload :Duration, File.expand_path("rackbench/duration", __dir__)
  autoload :LoadEngine, File.expand_path("rackbench/load/engine", __dir__)
  autoload :LoadResult, File.expand_path("rackbench/load/result", __dir__)
  autoload :LoadSettings, File.expand_path("rackbench/load/settings", __dir__)
  autoload :RequestList, File.expand_path("rackbench/load/request_list", __dir__)
  autoload :LoadSummary, File.expand_path("rackbench/load/summary", __dir__)
  autoload :Experiment, File.expand_path("rackbench/experiment", __dir__)
  autoload :MachineEnv, File.expand_path("rackbench/observe/machine_env", __dir__)
  autoload :MachineLoad, File.expand_path("rackbench/observe/machine_load", __dir__)
  autoload :Store, File.expand_path("rackbench/store", __dir__)
  autoload :Trial, File.expand_path("rackbench/trial", __dir__)
  autoload :Runner, File.expand_path("rackbench/runner", __dir__)
  autoload :TrialReport, File.expand_path("rackbench/report/trial_report", __dir__)
  autoload :Units, File.expand_path("rackbench/units", __dir__)
  autoload :Stats, File.expand_path("rackbench/stats", __dir__)
  autoload :Report, File.expand_path("rackbench/report", __dir__)
  autoload :HtmlReport, File.expand_path("rackbench/html_report", __dir__)
  autoload :Micro, File.expand_path("rackbench/micro", __dir__)
  autoload :Profile, File.expand_path("rackbench/profile", __dir__)
  autoload :Rubies, File.expand_path("rackbench/rubies", __dir__)
  autoload :BundleEnv, File.expand_path("rackbench/bundle_env", __dir__)
  autoload :CacheRoot, File.expand_path("rackbench/cache_root", __dir__)
  autoload :CacheUse, File.expand_path("rackbench/cache_use", __dir__)
  autoload :CacheInventory, File.expand_path("rackbench/cache_inventory", __dir__)
  autoload :HolderLock, File.expand_path("rackbench/holder_lock", __dir__)
  autoload :Servers, File.expand_path("rackbench/servers", __dir__)
  autoload :ServerProcess, File.expand_path("rackbench/process/server_process", __dir__)
  autoload :Ports, File.expand_path("rackbench/process/ports", __dir__)
  autoload :ProcessTree, File.expand_path("rackbench/observe/process_tree", __dir__)
  autoload :Sampler, File.expand_path("rackbench/observe/sampler", __dir__)
  autoload :Watchdog, File.expand_path("rackbench/process/watchdog", __dir__)
  autoload :Proxy, File.expand_path("rackbench/proxy", __dir__)
end
