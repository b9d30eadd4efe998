# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"

# What runs beside a trial (Trial::Http::Companion), through the runner and
# the HTTP kind against fakes: a companion of the test's own joins every
# trial by registering under a name, and is called at each step in order
# without Trial::Http or LoadRun naming it; the window's edges reach the
# parts in their companions' order; a part that fails at an edge loses its
# own figure only; a part whose process died fails the trial.
describe Rackbench::Trial::Http::Companion do
  let(:dir) { Dir.mktmpdir("rackbench-companions") }
  let(:out) { StringIO.new }
  let(:log) { [] }
  after { FileUtils.rm_rf(dir) }

  # Records every hook its parts see, tagged with its name.
  class RecordingCompanion < Rackbench::Trial::Http::Companion
    attr_reader :log

    def self.with(order, log, name, failure: nil, raises_at: nil)
      Class.new(self) { const_set(:ORDER, order) }.tap do |klass|
        klass.define_method(:initialize) do |setup|
          super(setup)
          @log = log
          @name = name
          @failure = failure
          @raises_at = raises_at
        end
      end
    end

    def part(scene)
      Part.new(@log, @name, scene, @failure, @raises_at)
    end

    class Part < Rackbench::Trial::Http::Companion::Part
      def initialize(log, name, scene, failure, raises_at)
        super()
        @log = log
        @name = name
        @scene = scene
        @failure = failure
        @raises_at = raises_at
      end

      def note(hook)
        @log << [@name, hook]
        raise Rackbench::SetupError, "#{@name} cannot #{hook}" if @raises_at == hook
      end

      def env
        { "trial" => { "RECORDED_#{@name.upcase}" => "1" } }
      end

      def before_boot = note(:before_boot)
      def before_spawn = note(:before_spawn)
      def after_boot(_booted) = note(:after_boot)
      def window_started = note(:window_started)
      def window_ended = note(:window_ended)

      def keep(facts)
        note(:keep)
        facts[:sample] ||= { "kept_by" => @name }
      end

      def failure(_when_text)
        note(:failure)
        @failure
      end

      def document(outcome)
        note(:document)
        outcome
      end

      def stop(_facts) = note(:stop)
      def finish(_facts) = note(:finish)
    end
  end

  def experiment
    Rackbench::Experiment.parse(<<~YAML, source: "test.yml", base_dir: dir)
      name: companions
      rubies: [ruby]
      servers: [puma]
      apps: [rack-hello]
      load: { duration: 0.1s, warmup: 0s, connections: 4, timeout: 2s }
    YAML
  end

  def run_with(**companions)
    launcher = Fakes::Launcher.new
    Rackbench::Runner.new(source: experiment, results_dir: dir, out: out, err: StringIO.new, installs: [Fakes.install],
                          layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                          environment: { "test" => true }, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                          collaborators: { engine: Fakes::Engine.new, launcher: launcher, bundles: Fakes::Bundles.new,
                                           companions: Fakes.companions(**companions) },
                          watchdog: Fakes::Watchdog.new).run
    [launcher, Rackbench::Store.open(dir, &:trials)]
  end

  it "calls a registered companion's part at every step of the trial, in order, and its variables reach the server" do
    launcher, records = run_with(late: RecordingCompanion.with(95, log, "late"))
    assert_equal 1, records.size
    assert records.first.ok?, records.first.reason
    assert_equal %i[before_boot before_spawn after_boot window_started window_ended keep failure document stop finish],
                 log.map(&:last)
    assert_equal "1", launcher.launches.first[:env].to_h["RECORDED_LATE"]
  end

  it "tells the window's edges to the parts in their companions' order, the first one first at each edge" do
    run_with(early: RecordingCompanion.with(5, log, "early"), late: RecordingCompanion.with(95, log, "late"))
    edges = log.select { |_, hook| %i[window_started window_ended].include?(hook) }
    assert_equal [%w[early window_started], %w[late window_started], %w[early window_ended], %w[late window_ended]],
                 edges.map { |name, hook| [name, hook.to_s] }
    # Stopped the other way round: what started last stops first.
    assert_equal %w[late early], log.select { |_, hook| hook == :stop }.map(&:first)
  end

  it "keeps the measurement and the other parts' figures when one part fails at an edge" do
    _, records = run_with(early: RecordingCompanion.with(5, log, "early", raises_at: :window_started),
                          late: RecordingCompanion.with(95, log, "late"))
    assert records.first.ok?, records.first.reason
    assert_includes log, ["late", :window_started]
    assert_equal Fakes::Sampler::SUMMARY.transform_keys(&:to_s), records.first.sample.transform_keys(&:to_s)
  end

  it "fails the trial with the reason of a part whose process died during the measurement" do
    _, records = run_with(late: RecordingCompanion.with(95, log, "late",
                                                       failure: "sidecar exited with status 1 during the measurement"))
    assert_equal "failed", records.first.status
    assert_equal "sidecar exited with status 1 during the measurement", records.first.reason
    assert_equal %i[stop finish], log.last(2).map(&:last), "stopped and finished however it ended"
  end

  it "finishes every part of a trial whose server never booted" do
    launcher_failure = Rackbench::SetupError.new("server never answered")
    runner_launcher = Fakes::Launcher.new { launcher_failure }
    Rackbench::Runner.new(source: experiment, results_dir: dir, out: out, err: StringIO.new, installs: [Fakes.install],
                          layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                          environment: { "test" => true }, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                          collaborators: { engine: Fakes::Engine.new, launcher: runner_launcher,
                                           bundles: Fakes::Bundles.new,
                                           companions: Fakes.companions(late: RecordingCompanion.with(95, log, "late")) },
                          watchdog: Fakes::Watchdog.new).run
    assert_equal %i[before_boot finish], log.map(&:last)
  end

  it "loads every companion from its own file under trial/http/companions/, each registered under its name" do
    files = Dir[File.join(Rackbench::Trial::Http::Companions::DIRECTORY, "*.rb")].map { |f| File.basename(f, ".rb").to_sym }
    assert_equal files.sort, Rackbench::Trial::Http.companions.keys.sort
  end
end
