# frozen_string_literal: true

require_relative "errors"

module Rackbench
  # Micro-benchmarks outside HTTP (doc/micro.md). Each is a standalone
  # script that any ruby of an experiment runs in a fresh process, driven
  # here: planned in seeded order over rubies and settings, bounded by a
  # timeout, stored in the results database as trials like HTTP ones.
  #
  #   settings = Rackbench::Micro::Settings.build(workers: "1,10", modes: "threads,fibers")
  #   Rackbench::Runner.new(source: settings, results_dir: "rackbench-results").run
  module Micro
    autoload :Settings, File.expand_path("micro/settings", __dir__)

    # The benchmark script of `rackbench micro fibers`.
    FIBERS_SCRIPT = File.expand_path("micro/fibers_bench.rb", __dir__)

    # The `app` of every fibers trial, and the suffix of its experiment name.
    FIBERS_APP = "micro-fibers"

    # Worker kinds of the fibers benchmark, as the script names them.
    FIBERS_MODES = %w[threads processes fibers].freeze
  end
end
