# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"

# Instructions trials through the runner and the HTTP kind, against fakes:
# a ruby valgrind cannot run is left out of the plan with the reason, and
# a fixed count with a request list's session probes is planned; an
# instructions trial's server is started under valgrind with a longer
# readiness deadline and no counting agent, its engine counts a window of
# N requests with a 10 ms pause over one connection, its record says what
# it measured; and a server none of whose processes runs under valgrind
# fails the trial with the reason (the fake server is this test process).
describe "instructions trials in a run" do
  let(:dir) { Dir.mktmpdir("rackbench-instructions-trials") }
  let(:out) { StringIO.new }
  let(:engine) { Fakes::Engine.new }
  let(:launcher) { Fakes::Launcher.new }
  let(:valgrind) { Rackbench::Instructions::Valgrind.new(program: "/fake/valgrind", vgdb: "/fake/vgdb") }
  after { FileUtils.rm_rf(dir) }

  # Answers why a variant cannot run under valgrind, refusing those +refused+ names.
  def support(refused)
    Object.new.tap do |answers|
      answers.define_singleton_method(:reason) do |variant, env:|
        refused.include?(variant.name) ? "#{variant.name} cannot run under valgrind (--instr-atstart=no): [BUG]" : nil
      end
      answers.define_singleton_method(:gc_entries) { |_variant, env:| nil }
    end
  end

  def experiment(text)
    Rackbench::Experiment.parse(text, source: "test.yml", base_dir: dir)
  end

  def runner(exp, refused: [])
    Rackbench::Runner.new(source: exp, results_dir: dir, out: out, err: StringIO.new, installs: [Fakes.install],
                          layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                          environment: { "test" => true }, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                          ready_timeout_s: 7,
                          collaborators: { engine: engine, launcher: launcher, bundles: Fakes::Bundles.new,
                                           companions: Fakes.companions(instructions: { valgrind: valgrind,
                                                                                        valgrind_support: support(refused) }) },
                          watchdog: Fakes::Watchdog.new)
  end

  let(:counting) do
    experiment(<<~YAML)
      name: counting
      rubies: [ruby, { name: ruby-yjit, ruby: ruby, options: --yjit }]
      servers: [puma]
      apps: [rack-hello]
      measure: [time, instructions]
      load: { count: 300, warmup: 0s, timeout: 2s }
    YAML
  end

  it "leaves out, before the run, a ruby valgrind cannot run, with the reason" do
    plan = runner(counting, refused: ["ruby-yjit"]).plan
    assert_equal ["ruby-yjit cannot run under valgrind (--instr-atstart=no): [BUG]"], plan.skipped.map(&:reason)
    assert_equal [%w[ruby instructions], %w[ruby time]], plan.trials.map { |t| [t.config.dims["ruby"], t.measure] }.sort
  end

  it "plans a fixed count with a request list's session probes (the engine sends them outside the window)" do
    plan = runner(experiment("name: probes\nservers: [puma]\napps: [mix]\nload: { count: 100, timeout: 2s }\n")).plan
    assert_empty plan.skipped.map(&:reason)
    assert_equal ["mix"], plan.trials.map { |t| t.config.app.name }
  end

  it "starts the server under valgrind, counts a fixed window with a pause, and fails naming a server valgrind does not run" do
    summary = runner(counting, refused: ["ruby-yjit"]).run
    assert_equal [1, 1], [summary.ok, summary.failed]
    counted, timed = Rackbench::Store.open(dir, &:trials).partition { |r| Rackbench::Instructions.trial?(r) }.map(&:first)
    assert_equal "instructions: no process of the server runs under valgrind", counted.reason
    assert timed.ok?, timed.reason
    launches = launcher.launches.to_h { |k| [k[:trial].instructions?, k] }
    wrapper = launches[true][:wrapper]
    assert_equal ["/fake/valgrind", "--tool=callgrind", "--instr-atstart=no"], wrapper.first(3)
    assert_includes wrapper, "--callgrind-out-file=#{File.join(launches[true][:work_dir], "instructions", "callgrind.%p")}"
    assert_empty launches[false][:wrapper], "a time trial's server runs as it is"
    assert_equal [70, 7], [launches[true][:ready_timeout_s], launches[false][:ready_timeout_s]]
    refute launches[true][:env].to_h.key?("RACKBENCH_INSIDE"), "no counting agent under valgrind"
    # The GC agent alone, on the window channel, FIFOs where pipes cannot reach.
    assert_equal %w[1 1 1], launches[true][:env].to_h.values_at("RACKBENCH_WINDOW", "RACKBENCH_INSTRUCTIONS_GC",
                                                               "RACKBENCH_WINDOW_FIFO")
    refute launches[false][:env].to_h.key?("RACKBENCH_INSTRUCTIONS_GC")
    assert_equal "counting", launches[false][:env].to_h["RACKBENCH_INSIDE"]
    # The instructions trial warms up by count (its window's, at least 1,000), the time trial by time.
    assert_equal [[300, 1, 0.0, nil], [300, 1, 0.01, 1000]],
                 engine.settings.map { |s| [s.count, s.connections, s.think_s, s.warmup_count] }.sort_by { |s| s[2] }
    # Its requests wait for the server to sleep: the gate's pids file, in its instructions directory.
    gated = engine.settings.find { |s| s.think_s.positive? }
    assert_equal File.join(launches[true][:work_dir], "instructions", "quiet.pids"), gated.quiet_pids_file
    assert_nil engine.settings.find { |s| s.think_s.zero? }.quiet_pids_file
    assert_equal "instructions", counted.load_settings["measure"]
    refute timed.load_settings.key?("measure")
  end
end
