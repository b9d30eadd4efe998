# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# `measure: [time, instructions]` end to end with real valgrind: one run
# of the counted app (test/fixtures/apps/counted: a minor GC every
# MINOR_GC_EVERY requests of a process) on a Puma cluster (a master and 2 forked workers, every one
# under callgrind), shared by the assertions. Its instructions trial's
# counts are consistent (the processes sum to the total, the total over the
# window's responses is the figure, the window is exactly load.count
# requests); every Ruby process ran its GC at the window's start and
# reported its cycles, the GC's instructions were told apart (Debian's
# stripped libruby: by the GC probe) and every request waited for the
# three processes to sleep; its time trial counts in no instructions figure and the
# instructions trial in no time figure; a ruby valgrind cannot run is left
# out of the plan before the run, with the reason, and runs nowhere; and
# nothing is left running. About a minute here (a cluster's boot under
# valgrind, 200 requests under instrumentation, one refusal probe).
describe "instructions per request (integration)" do
  before { require_engine! }

  COUNT = 200
  MINOR_GC_EVERY = 10
  APP = File.expand_path("../fixtures/apps/counted", __dir__)
  REFUSED = File.expand_path("../fixtures/valgrind/refuse_under_valgrind.rb", __dir__)

  def self.outcome
    @outcome ||= begin
      dir = Dir.mktmpdir("rackbench-instructions")
      file = File.join(dir, "instructions.yml")
      File.write(file, <<~YAML)
        name: instructions-integration
        seed: 1
        batches: 1
        rubies:
          - ruby
          - { name: ruby-refused, ruby: ruby, options: ["-r#{REFUSED}"] }
        servers: [puma]
        apps: [{ name: counted, path: #{APP}, expect_body: counted }]
        processes: 2
        threads: 1
        measure: [time, instructions]
        # The app's own minor GCs, a known number per process's requests:
        # the window's GC to count apart. (A low RUBY_GC_MALLOC_LIMIT was
        # tried first and failed under load: Ruby starts its malloc limit at
        # 16 MB and lowers it by only 2% per GC until one GC sees more
        # malloc than the current limit, so whether the window's requests
        # met the named limit depended on how many GCs the warmup ran.)
        env: { MINOR_GC_EVERY_REQUESTS: #{MINOR_GC_EVERY} }
        load: { count: #{COUNT}, warmup: 0.5s, timeout: 10s } # a timeout given: no calibration boot
      YAML
      results = File.join(dir, "results")
      # The probe's answers go to a cache of the test's own; its Bundler
      # environments are the suite's (the counted app and Puma, which other tests
      # installed already: installing them again here would compile Puma).
      cache = File.join(dir, "cache")
      FileUtils.mkdir_p([cache, Rackbench::BundleEnv.default_root])
      File.symlink(Rackbench::BundleEnv.default_root, File.join(cache, "bundles"))
      env = { "RACKBENCH_CACHE" => cache }
      out, err, status = rackbench("run", file, "--json", "--results", results, env: env)
      records = Rackbench::Store.open(results, &:trials)
      { status: status, out: out, err: err, records: records, dir: dir, results: results }
    end
  end

  Minitest.after_run { FileUtils.rm_rf(outcome[:dir]) if @outcome }

  let(:outcome) { self.class.outcome }
  let(:counted) { outcome[:records].find { |r| Rackbench::Instructions.trial?(r) } }
  let(:timed) { outcome[:records].reject { |r| Rackbench::Instructions.trial?(r) } }

  it "counts every process of the cluster over exactly the window's requests, the processes summing to the total" do
    assert outcome[:status].success?, outcome[:err]
    assert counted&.ok?, "the instructions trial: #{counted&.reason}"
    doc = counted.instructions
    assert_equal COUNT, counted.result["requests"]
    assert_equal COUNT, doc["requests"]
    assert_equal doc["instructions"], doc["processes"].sum { |p| p["instructions"] }
    assert_in_delta doc["instructions"].fdiv(COUNT), doc["per_request"], 1e-6
    roles = doc["processes"].map { |p| p["role"] }
    assert_equal 1, roles.count("main")
    assert_equal 2, roles.count("worker"), "both forked workers ran under callgrind: #{doc["processes"]}"
    assert_operator doc["functions"].size, :>, 10
    assert_operator doc["functions"].sum { |f| f["instructions"] }, :<=, doc["instructions"]
    # Its load: four connections per server process (the warmup reaches both workers), a 10 ms pause, the
    # measure marked.
    assert_equal [8, 0.01, "instructions"], counted.load_settings.values_at("connections", "think_s", "measure")
    # callgrind's own files stay with the trial.
    work = Dir.glob(File.join(outcome[:results], "work", "*-instructions", "instructions")).first
    assert_operator Dir.glob(File.join(work, "callgrind.*.1")).size, :>=, 3
  end

  it "keeps the two measures apart: the time trial's exact count and figures, the instructions in their own" do
    assert_equal 1, timed.size
    time_trial = timed.first
    assert time_trial.ok?, time_trial.reason
    assert_equal COUNT, time_trial.result["requests"]
    assert_nil time_trial.instructions
    refute_nil time_trial.inside, "a time trial's server runs the counting agent"
    assert_nil counted.inside, "an instructions trial's runs none"
    config = JSON.parse(outcome[:out])["configs"].first
    assert_equal [1, 1], [config["batches"], config.dig("instructions", "batches")]
    assert_equal [time_trial.rate.round(3)], config["rps_per_batch"].map { |v| v.round(3) }
    assert_in_delta counted.instructions["outside_gc_per_request"], config.dig("instructions", "per_request", "median"), 1e-6
    assert_equal "outside_gc", config.dig("instructions", "method")
  end

  it "counts the GC apart: every Ruby process's cycles, the collector's instructions, the rest outside it" do
    doc = counted.instructions
    gc = doc["gc"]
    refute_nil gc, "the GC agent's counts"
    assert_equal doc["processes"].map { |p| p["pid"] }.sort, gc["processes"].map { |p| p["pid"] }.sort,
                 "the master and both workers ran their GC at the edge"
    assert(gc["processes"].none? { |p| p["missing"] })
    # Each process started a GC on every MINOR_GC_EVERY-th of its own
    # requests: at least COUNT / MINOR_GC_EVERY less one per worker (a
    # worker's window need not start at a multiple). A minor, unless Ruby
    # had a major pending (GC.start(full_mark: false) then runs a major:
    # a CI run counted 17 minors and 3 majors, `major_by: nofree`).
    cycles = gc["cycles"]
    assert_operator cycles["minor"] + cycles["major"], :>=, (COUNT / MINOR_GC_EVERY) - 2,
                    "the app's GCs: #{gc["processes"]}"
    assert_operator cycles["minor"], :>, 0, "the app's minor GCs: #{gc["processes"]}"
    assert_equal "probe", gc["source"], "Debian's libruby is stripped: the probe found its collector"
    refute_nil gc["instructions"]
    assert_operator gc["instructions"], :<, doc["instructions"]
    assert_in_delta (doc["instructions"] - gc["instructions"]).fdiv(COUNT), doc["outside_gc_per_request"], 1e-6
    # The gate watched the three processes; every request of the window looked at least once.
    quiet = JSON.parse(JSON.generate(counted.result))["quiet"]
    assert_equal 3, quiet["pids"]
    assert_nil quiet["error"]
    assert_operator doc["quiet"]["checks"], :>=, COUNT
  end

  it "refuses, before the run, the ruby valgrind cannot run, with the reason, and runs it nowhere" do
    assert_match(/ruby-refused cannot run under valgrind \(--instr-atstart=no\): \[BUG\] refused under valgrind/,
                 outcome[:out] + outcome[:err])
    assert(outcome[:records].none? { |r| r.ruby == "ruby-refused" })
    assert_equal ["ruby"], outcome[:records].map(&:ruby).uniq
  end

  it "leaves no valgrind running" do
    outcome
    leftovers = Dir.glob("/proc/[0-9]*/environ").select do |path|
      File.binread(path).include?(outcome[:results])
    rescue SystemCallError
      false
    end
    assert_empty leftovers
  end
end
