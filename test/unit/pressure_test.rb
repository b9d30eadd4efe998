# frozen_string_literal: true

require "test_helper"
require "stringio"
require "sequel"
require "support/old_store"
require_relative "../fixtures/fakes"

# The pressure companion (Trial::Http::Companions::Pressure), a measure
# added as one file: the kernel's pressure stall information read at the
# window's edges from a fake /proc/pressure, stored with the trial
# (migration 12), and shown among the inside figures.
describe "the pressure companion" do
  PRESSURE = Rackbench::Trial::Http.companions.fetch(:pressure)

  let(:dir) { Dir.mktmpdir("rackbench-pressure") }
  let(:proc_pressure) { File.join(dir, "pressure").tap { |d| FileUtils.mkdir_p(d) } }
  after { FileUtils.rm_rf(dir) }

  # Writes the kernel's files: resource => [some total µs, full total µs or nil].
  def write_totals(totals)
    totals.each do |resource, (some, full)|
      lines = ["some avg10=0.00 avg60=0.00 avg300=0.00 total=#{some}"]
      lines << "full avg10=0.00 avg60=0.00 avg300=0.00 total=#{full}" if full
      File.write(File.join(proc_pressure, resource), "#{lines.join("\n")}\n")
    end
  end

  it "reads every resource's totals, and leaves out what the kernel does not give" do
    write_totals("cpu" => [1000, 0], "io" => [50, 20])
    assert_equal({ "cpu" => { "some" => 1000, "full" => 0 }, "io" => { "some" => 50, "full" => 20 } },
                 PRESSURE.totals(proc_pressure))
    assert_equal({}, PRESSURE.totals(File.join(dir, "no-psi")))
  end

  it "gives each stall as a share of the window, and nothing for a window without readings" do
    before = { "cpu" => { "some" => 1_000_000, "full" => 0 }, "memory" => { "some" => 0, "full" => 0 } }
    after = { "cpu" => { "some" => 1_500_000, "full" => 0 }, "memory" => { "some" => 20_000, "full" => 10_000 } }
    assert_equal({ "window_s" => 2.0, "cpu" => { "some_pct" => 25.0, "full_pct" => 0.0 },
                   "memory" => { "some_pct" => 1.0, "full_pct" => 0.5 } }, PRESSURE.shares(before, after, 2.0))
    assert_nil PRESSURE.shares({}, {}, 2.0)
    assert_nil PRESSURE.shares(before, after, 0.0)
    # A total that went backwards (another boot's file) is no share.
    assert_nil PRESSURE.shares(after, before, 2.0)["cpu"]["some_pct"]
  end

  describe "in a run" do
    # An engine whose window moves the fake kernel's totals, as the
    # machine's contention would while it measures.
    class PressureEngine < Fakes::Engine
      def initialize(pressure_dir)
        super()
        @pressure_dir = pressure_dir
      end

      def run(settings, env: {}, on_phase: nil)
        super(settings, env: env, on_phase: lambda do |phase|
          on_phase&.call(phase)
          next unless phase == :measure

          File.write(File.join(@pressure_dir, "cpu"), "some avg10=1.00 avg60=1.00 avg300=1.00 total=900000000\n" \
                                                      "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
        end)
      end
    end

    it "stores the window's stall shares with the trial and shows them among the inside figures" do
      write_totals("cpu" => [0, 0], "memory" => [0, 0], "io" => [0, 0])
      experiment = Rackbench::Experiment.parse(<<~YAML, source: "t.yml", base_dir: dir)
        name: pressure
        rubies: [ruby]
        servers: [puma]
        apps: [rack-hello]
        load: { duration: 0.1s, warmup: 0s, connections: 1, timeout: 2s }
      YAML
      results = File.join(dir, "results")
      Rackbench::Runner.new(source: experiment, results_dir: results, out: StringIO.new, err: StringIO.new,
                            installs: [Fakes.install],
                            layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                            environment: { "test" => true }, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                            collaborators: { engine: PressureEngine.new(proc_pressure), launcher: Fakes::Launcher.new,
                                             bundles: Fakes::Bundles.new,
                                             companions: Fakes.companions(pressure: { dir: proc_pressure }) },
                            watchdog: Fakes::Watchdog.new).run
      record = Rackbench::Store.open(results, &:trials).first
      pressure = record.pressure
      assert_operator pressure["cpu"]["some_pct"], :>, 0, pressure.inspect
      assert_equal 0.0, pressure["memory"]["some_pct"]
      figures = Rackbench::Report::InsideFigures.of(record)
      assert_equal pressure["cpu"]["some_pct"], figures["cpu_stall_pct"]
      assert_equal 0.0, figures["io_stall_pct"]
    end
  end

  it "adds its column by a migration: stored trials read back without pressure, new ones with it" do
    index = Rackbench::Store::Schema::MIGRATIONS.each_index.find do |i|
      db = Sequel.sqlite
      Rackbench::Store::Schema::MIGRATIONS.first(i + 1).each { |m| m.call(db) }
      db.table_exists?(:trials) && db[:trials].columns.include?(:pressure)
    ensure
      db&.disconnect
    end
    refute_nil index, "a migration adds trials.pressure"
    path = File.join(dir, "results.db")
    experiment = OldStore.create(path, version: index, rackbench_version: "0.3.0", retried: false, row: {})
    shares = { "window_s" => 2.0, "cpu" => { "some_pct" => 12.5, "full_pct" => 0.0 } }
    Rackbench::Store.open(dir) do |store|
      assert_equal [["kept", nil]], store.trials.map { |t| [t.key, t.pressure] }
      store.save_trial(experiment, Rackbench::Trial::Record.new(key: "new", kind: "http", status: "ok", pressure: shares))
      assert_equal shares, store.trials.find { |t| t.key == "new" }.pressure
    end
  end
end
