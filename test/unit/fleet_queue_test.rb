# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"

# The fleet's queue and worker over a SQLite store and the runner's fakes:
# the claim's order and exclusions, heartbeats, a dead worker's batch put
# back to run whole (its trials kept as earlier attempts), a claim lost
# mid-batch, the checks before a claim, and `run --fleet`'s refusals.
# The same datasets run on PostgreSQL in test/integration/fleet_test.rb.
describe Rackbench::Fleet::Queue do
  let(:dir) { Dir.mktmpdir("rackbench-fleet") }
  after { FileUtils.rm_rf(dir) }

  def experiment_text(name: "fleet-unit", app: "rack-hello")
    <<~YAML
      name: #{name}
      seed: 7
      batches: 3
      servers: [puma]
      apps: [#{app}]
      processes: [1, 2]
      load: { duration: 0.1s, warmup: 0s, connections: 4, timeout: 2s }
    YAML
  end

  def experiment(**options)
    Rackbench::Experiment.parse(experiment_text(**options), source: "fleet.yml", base_dir: dir)
  end

  def store(&block)
    Rackbench::Store.open(File.join(dir, "store"), &block)
  end

  def submit(exp = experiment, **options)
    Rackbench::Fleet::Submit.new(exp, store: File.join(dir, "store"), detach: true, out: StringIO.new,
                                      err: StringIO.new, **options)
  end

  # Enqueues exp directly (Submit refuses SQLite, as the CLI does).
  def enqueue(exp = experiment, testbed: "lab")
    store do |s|
      id = s.find_or_create_experiment(name: exp.name, fingerprint: exp.fingerprint, seed: exp.seed,
                                       batches: exp.batches, source_text: exp.source_text, environment: {})
      Rackbench::Fleet::Queue.new(s).enqueue(id, batches: exp.batches, testbed: testbed,
                                                 document: { "base_dir" => exp.base_dir, "source" => exp.source })
      id
    end
  end

  def worker(name, runner_options: {}, **options)
    Rackbench::Fleet::Worker.new(
      store: File.join(dir, "store"), testbed: "lab", results_dir: File.join(dir, name), name: name,
      out: StringIO.new, err: StringIO.new, poll_s: 0.01, exit_when_idle: true,
      runner_options: { installs: [Fakes.install], layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                        environment: { "test" => true }, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                        watchdog: Fakes::Watchdog.new,
                        collaborators: { engine: Fakes::Engine.new, launcher: Fakes::Launcher.new,
                                         bundles: Fakes::Bundles.new, companions: Fakes.companions } }.merge(runner_options),
      **options
    )
  end

  it "claims whole batches oldest first, for its testbed, never one twice" do
    id = enqueue
    other = enqueue(experiment(name: "elsewhere"), testbed: "other-lab")
    store do |s|
      queue = Rackbench::Fleet::Queue.new(s)
      workers = Rackbench::Fleet::Workers.new(s)
      a = workers.register(name: "a", testbed: "lab")
      b = workers.register(name: "b", testbed: "lab")
      claims = [queue.claim(worker_id: a, testbed: "lab"), queue.claim(worker_id: b, testbed: "lab"),
                queue.claim(worker_id: a, testbed: "lab")]
      assert_equal [[id, 1], [id, 2], [id, 3]], claims.map { |c| [c.experiment_id, c.batch] }
      assert_nil queue.claim(worker_id: b, testbed: "lab"), "the other testbed's batches are not this one's"
      assert_equal [1, 1, 1], claims.map(&:claims)
      assert queue.beat(claims[0].id, a)
      refute queue.beat(claims[0].id, b), "a batch beats for its own worker only"
      assert queue.finish(claims[0].id, a)
      refute queue.finish(claims[0].id, a), "done once"
      assert_equal [other], queue.queued_experiment_ids("other-lab")
      assert_nil queue.claim(worker_id: b, testbed: "other-lab", refused: [other]), "a refused experiment is left"
    end
  end

  it "puts a batch back when its heartbeat is late, to run whole, and marks the dead worker's run interrupted" do
    id = enqueue
    store do |s|
      queue = Rackbench::Fleet::Queue.new(s)
      a = Rackbench::Fleet::Workers.new(s).register(name: "a", testbed: "lab")
      claim = queue.claim(worker_id: a, testbed: "lab")
      run = s.start_run(id, resumed: true)
      queue.started(claim.id, a, run)
      assert_empty queue.requeue_dead(dead_after_s: 3600), "a fresh heartbeat"
      back = queue.requeue_dead(dead_after_s: -2) # every heartbeat is late
      assert_equal [[id, 1, a]], back.map { |r| [r[:experiment_id], r[:batch], r[:worker_id]] }
      refute queue.held?(claim.id, a)
      assert_equal "interrupted", s.runs(id).last[:status]
      again = queue.claim(worker_id: a, testbed: "lab")
      assert_equal [1, true, 2], [again.batch, again.rerun, again.claims]
    end
  end

  it "runs every batch through workers, each batch on one host, every trial once with its host" do
    id = enqueue
    ran = [worker("host-a"), worker("host-b")].map(&:run)
    assert_equal 3, ran.sum
    store do |s|
      trials = s.trials(id)
      assert_equal 6, trials.map(&:key).uniq.size
      assert_equal 6, trials.size
      trials.group_by(&:batch).each_value { |batch| assert_equal 1, batch.map(&:host).uniq.size }
      assert_equal %w[host-a], trials.map(&:host).uniq, "the first worker ran them all: the second found none"
      assert s.experiment(id)[:finished_at], "the last batch done finished the experiment"
      assert_equal %w[finished finished finished], s.runs(id).map { |r| r[:status] }
    end
  end

  it "runs a batch put back whole on the next worker, the dead worker's trials kept as earlier attempts" do
    id = enqueue
    interrupted = worker("host-a", runner_options: {
                           collaborators: { engine: Fakes::Engine.new(interrupt_at: 2), launcher: Fakes::Launcher.new,
                                            bundles: Fakes::Bundles.new, companions: Fakes.companions }
                         })
    # Ctrl-C in the second trial: the batch goes back at once, to run whole.
    assert_raises(Rackbench::Interrupted) { interrupted.run }
    store do |s|
      assert_equal [1, "host-a"], s.trials(id).map { |t| [t.batch, t.host] }.first
      batch = Rackbench::Fleet::Queue.new(s).batches(id).first
      assert_equal %w[queued], [batch[:state]]
      assert batch[:rerun]
    end
    worker("host-b").run
    store do |s|
      trials = s.trials(id)
      assert_equal 6, trials.size
      first_batch = trials.select { |t| t.batch == 1 }
      assert_equal [["host-b", 2]], first_batch.map { |t| [t.host, t.attempt] }.uniq.first(1)
      assert(first_batch.all? { |t| t.host == "host-b" })
      earlier = s.earlier_attempts(id)
      assert_equal [[1, "host-a", "ok"]], earlier.map { |t| [t.attempt, t.host, t.status] }
    end
  end

  it "stores nothing more of a batch that went back to the queue under it" do
    id = enqueue
    store do |s|
      queue = Rackbench::Fleet::Queue.new(s)
      a = Rackbench::Fleet::Workers.new(s).register(name: "a", testbed: "lab")
      claim = queue.claim(worker_id: a, testbed: "lab")
      claimed = Rackbench::Fleet::ClaimedStore.new(s, queue: queue, claim: claim, worker_id: a)
      record = Rackbench::Trial::Record.new(key: "k#batch=1", batch: 1, kind: "http", status: "ok")
      claimed.save_trial(id, record)
      queue.requeue_dead(dead_after_s: -2)
      error = assert_raises(Rackbench::Fleet::ClaimLost) do
        claimed.save_trial(id, Rackbench::Trial::Record.new(key: "k2#batch=1", batch: 1, kind: "http", status: "ok"))
      end
      assert_match(/batch 1 of experiment #{id} went back to the queue .*: trial k2#batch=1 is not stored/, error.message)
      assert_equal ["k#batch=1"], s.trials(id).map(&:key)
    end
  end

  it "checks an experiment before claiming: an app path this host lacks is refused in one line" do
    FileUtils.mkdir_p(File.join(dir, "myapp"))
    File.write(File.join(dir, "myapp", "config.ru"), "run ->(_) { [200, {}, ['ok']] }\n")
    exp = Rackbench::Experiment.parse(experiment_text(app: "{ name: mine, path: myapp }"), source: "fleet.yml", base_dir: dir)
    id = enqueue(exp)
    FileUtils.rm_rf(File.join(dir, "myapp")) # this worker's host lacks it
    err = StringIO.new
    assert_equal 0, worker("host-a", err: err).run
    assert_match(/\Arackbench worker: not claiming experiment fleet-unit \(id #{id}\): .*myapp.* is not a directory/, err.string)
    assert_equal 1, err.string.lines.size
    store do |s|
      assert_equal %w[queued queued queued], Rackbench::Fleet::Queue.new(s).batches(id).map { |b| b[:state] }
      refused = Rackbench::Fleet::Workers.new(s).running("lab")
      assert_empty refused, "the worker stopped"
    end
  end

  it "follows the queue: claims, a batch put back, stored trials and a worker's refusal, one line each" do
    id = enqueue
    out = StringIO.new
    store do |s|
      queue = Rackbench::Fleet::Queue.new(s)
      workers = Rackbench::Fleet::Workers.new(s)
      a = workers.register(name: "bench-a", testbed: "lab")
      b = workers.register(name: "bench-b", testbed: "lab")
      workers.refuse(b, id, "apps[0].path: \"myapp\" is not a directory")
      first = queue.claim(worker_id: a, testbed: "lab")
      queue.requeue_dead(dead_after_s: -2)
      3.times do
        claim = queue.claim(worker_id: a, testbed: "lab")
        queue.finish(claim.id, a)
      end
      summary = Rackbench::Fleet::Follow.new(s, id, testbed: "lab", out: out, poll_s: 0.01).run
      assert_equal [0, 0], [summary.ok, summary.failed]
      assert_equal 1, first.batch
    end
    assert_equal ["  batch 1: done by bench-a", "  batch 2: done by bench-a", "  batch 3: done by bench-a",
                  "  0 trials stored", "  worker bench-b will not run it: apps[0].path: \"myapp\" is not a directory"],
                 out.string.lines.map(&:chomp)
  end

  it "refuses --fleet on a database other hosts cannot share, and what a fleet cannot do, in one line" do
    error = assert_raises(Rackbench::UsageError) { submit.run }
    assert_match(/--fleet needs a PostgreSQL database that every host reaches/, error.message)
    file = File.join(dir, "fleet.yml").tap { |path| File.write(path, experiment_text) }
    {
      ["--testbed", "lab"] => "--testbed only works with --fleet",
      ["--fleet", "postgres://db/x", "--detect", "5%"] => "--detect decides each batch from the batches before it",
      ["--fleet", "postgres://db/x", "--fail-fast"] => "--fail-fast stops one host at its first failure",
      ["--fleet", "postgres://db/x", "--store", "postgres://db/y"] => "--fleet takes the database URL"
    }.each do |args, message|
      err = StringIO.new
      assert_equal Rackbench::CLI::EXIT_USAGE, Rackbench::CLI.run(["run", file, *args], out: StringIO.new, err: err)
      assert_match(/\Arackbench: #{Regexp.escape(message)}/, err.string)
    end
    err = StringIO.new
    assert_equal Rackbench::CLI::EXIT_USAGE, Rackbench::CLI.run(["worker", File.join(dir, "store")], out: StringIO.new, err: err)
    assert_match(/worker needs the fleet's PostgreSQL database/, err.string)
  end
end
