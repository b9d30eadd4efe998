# frozen_string_literal: true

require "digest"
require "fileutils"
require "stringio"
require "tmpdir"
require_relative "report_store"

# Labelled runs of one experiment stored for the publish tests: each run a
# commit of "app own" (its revision label), two configurations (1 and 4
# threads) at chosen requests/s, five batches of 1% noise, on one machine.
module PublishRuns
  # `rackbench ARGV` in this process: [exit code, stdout, stderr].
  module Cli
    def cli(*argv)
      out = StringIO.new
      err = StringIO.new
      code = Rackbench::CLI.run(argv, out: out, err: err)
      [code, out.string, err.string]
    end
  end

  MACHINE = { "hostname" => "bench-1", "arch" => "x86_64", "cpu_model" => "Xeon E5", "cpu_count" => 2,
              "memory_total_bytes" => 24 * 1024**3, "kernel" => "6.1.0", "warnings" => [] }.freeze

  module_function

  # A results directory of the six runs most publish tests start from (the
  # 1-thread configuration 10% slower from run 3), stored once per test
  # process and copied to +target+ for each test.
  def six_runs(target)
    @six_runs ||= Dir.mktmpdir("rackbench-six-runs").tap do |dir|
      Rackbench::Store.open(File.join(dir, "results")) do |store|
        6.times { |i| store(store, i, rps: [i >= 3 ? 900.0 : 1000.0, 4000.0]) }
      end
      Minitest.after_run { FileUtils.rm_rf(dir) }
    end
    FileUtils.cp_r(File.join(@six_runs, "results"), target)
  end

  def commit(i) = Digest::SHA1.hexdigest("own app, commit #{i}")

  def revision(i, subject: "Change #{i}")
    { "of" => "app", "name" => "own", "commit" => commit(i), "committed_at" => "2026-11-#{10 + i}T10:00:00+00:00",
      "subject" => subject, "dirty" => false }
  end

  # Stores run +i+ (its commit, or +at+'s to re-run that revision) with
  # 1-thread and 4-thread requests/s +rps+ ([one, four]); returns its
  # experiment id. +given+: its --label pairs.
  def store(store, i, rps: [1000.0, 4000.0], at: i, given: { "branch" => "main" }, machine: MACHINE, batches: 5,
            failed: false, name: "bench")
    labels = Rackbench::Labels.new(given: given, revisions: [revision(at)])
    values = rps.each_with_index.map { |r, k| failed ? Array.new(batches) : ReportStore.noisy(r, 0.01, batches, 100 * i + k) }
    ReportStore.fill(store, { ReportStore.dims(ruby: "ruby", threads: 1) => values[0],
                              ReportStore.dims(ruby: "ruby", threads: 4) => values[1] },
                     name: name, labels: labels, environment: machine)
  end
end
