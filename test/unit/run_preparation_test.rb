# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"

# What a run builds before its first trial (Runner::Preparation: a
# server's compile, as Passenger's agent), shown as a step with its
# estimate in --dry-run's listing, in the run's announcement (its total
# included), and for `rackbench check`'s trials; nothing for servers that
# need nothing. Over a test adapter that says what it would compile, and
# the runner's fakes (no server, no compiler).
describe Rackbench::Runner::Preparation do
  # Puma as far as the fakes care, with a compile of its own to plan
  # while +needed+ says so.
  SLOW_BUILD = Class.new(Rackbench::Servers.fetch("puma").class) do
    attr_accessor :needed, :asked

    def name = "slowbuild"

    def preparation(install)
      (@asked ||= []) << install.name
      return nil unless needed

      Rackbench::Servers::Preparation.new(key: "slowbuild-agent", text: "compile slowbuild's agent",
                                          estimate_s: 252.0, basis: "guessed")
    end
  end

  let(:dir) { Dir.mktmpdir("rackbench-preparation") }
  let(:out) { StringIO.new }
  let(:adapter) { SLOW_BUILD.new.tap { |a| a.needed = true } }

  before { Rackbench::Servers.register("slowbuild", adapter) }

  after do
    Rackbench::Servers.unregister("slowbuild")
    FileUtils.rm_rf(dir)
  end

  def experiment(servers: "[puma, slowbuild]", rubies: "[ruby, { name: ruby-yjit, ruby: ruby, options: [--yjit] }]")
    Rackbench::Experiment.parse(<<~YAML, source: "test.yml", base_dir: dir)
      name: preparation-test
      seed: 3
      batches: 2
      rubies: #{rubies}
      servers: #{servers}
      apps: [rack-hello]
      processes: 1
      threads: 1
      load: { duration: 0.1s, warmup: 0s, connections: 1, timeout: 2s }
    YAML
  end

  def runner(exp = experiment)
    Rackbench::Runner.new(source: exp, results_dir: dir, out: out, err: StringIO.new, installs: [Fakes.install],
                          layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                          environment: { "test" => true }, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                          collaborators: { engine: Fakes::Engine.new, launcher: Fakes::Launcher.new,
                                           bundles: Fakes::Bundles.new, companions: Fakes.companions },
                          watchdog: Fakes::Watchdog.new)
  end

  it "lists the compile once after the plan of --dry-run, for two variants of one ruby" do
    listing = runner.plan_listing
    assert_equal 1, listing.scan("Before the first trial:").size, listing
    assert_match(/^Before the first trial: compile slowbuild's agent, about 4m 12s \(guessed\)$/, listing)
    assert listing.start_with?(runner.plan.to_s), "the plan as before, then the step"
    assert_equal ["ruby"], adapter.asked.uniq, "asked once per install: the variants share it"
  end

  it "says nothing more when no server needs anything built" do
    adapter.needed = false
    assert_equal runner.plan.to_s, runner.plan_listing
    puma = runner(experiment(servers: "[puma]"))
    assert_equal puma.plan.to_s, puma.plan_listing
  end

  it "announces the compile before the first trial, its time in the run's estimate" do
    summary = runner.run
    assert_equal 8, summary.ok
    header, first = out.string.lines
    seconds = ->(text) { text[/about (?:(\d+)m )?(\d+)s/] && ((Regexp.last_match(1).to_i * 60) + Regexp.last_match(2).to_i) }
    total_s = seconds.call(header)
    trials_s = runner.plan.estimated_s
    assert_in_delta trials_s + 252, total_s, 1.0, header
    assert_includes header, "4m 12s of it built first"
    assert_equal "  first: compile slowbuild's agent, about 4m 12s (guessed)\n", first
  end

  it "announces no step, and the trials' estimate alone, when nothing is to be built" do
    adapter.needed = false
    runner.run
    header = out.string.lines.first
    refute_includes header, "built first"
    refute_includes out.string, "first: "
    assert_match(/to run \(about \S+( \S+)?, guessed: warmup/, header)
  end

  it "gives rackbench check the step of the trials it examines" do
    r = runner
    preparation = r.preparation(r.examined_trials)
    assert_equal [{ "what" => "compile slowbuild's agent", "estimate_s" => 252.0, "basis" => "guessed" }],
                 preparation.to_a
    puma_only = r.examined_trials.reject { |t| t.config.server.name == "slowbuild" }
    assert_empty r.preparation(puma_only).to_a, "a check of Puma alone compiles nothing"
  end
end
