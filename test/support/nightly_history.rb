# frozen_string_literal: true

require "digest"
require "json"

# A year of nightly runs, simulated into a results store for the tests and
# the benchmark of `rackbench publish` (test/integration/publish_year_test.rb,
# bench/publish_speed.rb): one experiment on one machine, 20
# configurations, one run a night, each night at a new commit of "ruby
# master" (its revision label), every figure drawn with realistic noise:
#
# - each batch varies around the night's level by the series' CV: 0.1% to
#   0.3% for instructions per request, 0.6% for memory, 1% to 2% for
#   server CPU per request, 2% to 5% for requests/s, 5% for p99;
# - each night moves every series a little more (a boot's memory layout,
#   the machine's day: 0.3 of its CV), and all time series together by
#   0.2% (the machine), which its own interval never shows: the noise a
#   series must learn from its neighbours;
# - three steps at known commits: +0.5% instructions per request in one
#   instructions configuration (night 100), +2% server CPU per request
#   and -2% requests/s in one time configuration (night 200, reverted at
#   night 290), and a 5% slowdown of another (night 150: -5% requests/s,
#   +5% CPU per request and p99).
#
# Deterministic: the same seed gives the same store.
module NightlyHistory
  NIGHTS = 365
  BATCHES = 10
  START = Time.utc(2025, 1, 1, 2, 0, 0)
  EXPERIMENT = "nightly"
  MACHINE = { "hostname" => "bench-1", "arch" => "x86_64", "cpu_model" => "AMD EPYC 7B13", "cpu_count" => 8,
              "memory_total_bytes" => 32 * 1024**3, "kernel" => "6.1.0", "warnings" => [] }.freeze

  # One configuration: its dims, whether it measures instructions, and
  # each figure's level and CV per batch.
  Config = Struct.new(:dims, :instructions, :figures, keyword_init: true)

  # One injected change: from +night+ on, +figures+ (name => fraction)
  # move; +reverted_at+: the night it goes away (nil: never).
  Step = Struct.new(:night, :config, :figures, :primary, :reverted_at, keyword_init: true)

  SERVERS = %w[puma falcon pitchfork unicorn webrick thin iodine].freeze

  module_function

  def configs
    time = 14.times.map do |i|
      rps_cv = 0.02 + 0.03 * i / 13.0
      Config.new(dims: { "ruby" => i.even? ? "master" : "master-yjit", "server" => SERVERS[i / 2], "app" => "rails-hello",
                         "processes" => 2, "threads" => 4 },
                 instructions: false,
                 figures: { "rps" => [2000.0 + 100 * i, rps_cv], "cpu" => [300.0 + 10 * i, 0.01 + 0.01 * (i % 3) / 2],
                            "p99" => [8000.0 + 200 * i, 0.05], "memory" => [180e6 + 1e6 * i, 0.006] })
    end
    counts = 6.times.map do |i|
      Config.new(dims: { "ruby" => i.even? ? "master" : "master-yjit", "server" => SERVERS[i / 2], "app" => "rack-hello",
                         "processes" => 1, "threads" => 1 },
                 instructions: true, figures: { "instructions" => [173_000.0 + 5000 * i, 0.001 + 0.0004 * i] })
    end
    time + counts
  end

  def steps
    [Step.new(night: 100, config: 14, figures: { "instructions" => 0.005 }, primary: "instructions"),
     Step.new(night: 150, config: 9, figures: { "rps" => -0.05, "cpu" => 0.05, "p99" => 0.05 }, primary: "cpu"),
     Step.new(night: 200, config: 2, figures: { "cpu" => 0.02, "rps" => -0.02 }, primary: "cpu", reverted_at: 290)]
  end

  def commit(night) = Digest::SHA1.hexdigest("ruby master, night #{night}")

  # Stores nights +nights+ (a Range, default all) of the year into +store+;
  # returns their experiment ids. Each night is one experiment, stored in
  # one transaction.
  def fill(store, nights: 0...NIGHTS, seed: 1)
    all = configs
    # A simulation need not survive a power cut: no fsync per night.
    store.db.run("PRAGMA synchronous = OFF") unless store.postgres?
    nights.map do |night|
      values = night_values(night, all, seed: seed)
      store.db.transaction { store_night(store, night, all, values) }
    end
  end

  # Night +night+'s batches: per configuration, each figure's value of
  # each batch ({config index => {figure => [values]}}).
  def night_values(night, all = configs, seed: 1)
    random = Random.new(seed * 1_000_003 + night)
    machine_night = 1 + 0.002 * gauss(random)
    all.each_with_index.to_h do |config, c|
      # A count of instructions does not see the machine's night.
      machine = config.instructions ? 1.0 : machine_night
      levels = config.figures.to_h do |name, (level, cv)|
        [name, [level * factor(c, name, night) * machine * (1 + 0.3 * cv * gauss(random)), cv]]
      end
      [c, levels.transform_values { |level, cv| Array.new(BATCHES) { level * (1 + cv * gauss(random)) } }]
    end
  end

  def store_night(store, night, all, values)
    revision = { "of" => "ruby", "name" => "master", "commit" => commit(night), "ref" => "master",
                 "committed_at" => (START + night * 86_400 - 3600).iso8601, "subject" => "Commit of night #{night}" }
    labels = Rackbench::Labels.new(given: { "branch" => "master" }, revisions: [revision])
    id = store.find_or_create_experiment(name: EXPERIMENT, fingerprint: labels.fingerprint("nightly".ljust(64, "0")),
                                         seed: 1, batches: BATCHES, source_text: "", environment: MACHINE,
                                         labels: labels.to_h)
    store.db[:experiments].where(id: id).update(created_at: START + night * 86_400)
    # One statement per night, the rows Store#save_trial would insert: a
    # year is 73,000 trials.
    rows = all.each_with_index.flat_map do |config, c|
      Array.new(BATCHES) do |batch|
        record = trial(config, batch + 1, c * BATCHES + batch + 1, values[c].transform_values { |v| v[batch] })
        Rackbench::Store::RecordCodec.encode(id, record)
      end
    end
    store.db[:trials].multi_insert(rows)
    id
  end

  # What the injected steps make of figure +name+ of config +c+ at +night+.
  def factor(c, name, night)
    steps.select { |s| s.config == c && night >= s.night && (s.reverted_at.nil? || night < s.reverted_at) }
         .reduce(1.0) { |f, s| f * (1 + s.figures.fetch(name, 0.0)) }
  end

  def trial(config, batch, position, values)
    dims = config.dims
    base = { key: "#{JSON.generate(dims)}#batch=#{batch}", batch: batch, position: position, kind: "http",
             ruby: dims["ruby"], server: dims["server"], app: dims["app"], processes: dims["processes"],
             threads: dims["threads"], dims: dims, status: "ok" }
    if config.instructions
      # Its window is a fixed count of requests, slow under valgrind.
      result = { "rps" => 400.0, "requests" => 2000, "duration_s" => 5.0, "status" => { "200" => 2000 }, "errors" => {} }
      return Rackbench::Trial::Record.new(**base, load_settings: { "measure" => "instructions" }, result: result,
                                                  instructions: { "per_request" => values["instructions"] })
    end

    requests = (values["rps"] * 10).round
    cpu_s = values["cpu"] * requests / 1e6
    result = { "rps" => values["rps"], "requests" => requests, "duration_s" => 10.0, "status" => { "200" => requests },
               "errors" => {}, "latency_us" => { "p50" => values["p99"] / 4, "p90" => values["p99"] / 2,
                                                 "p99" => values["p99"], "p99_9" => values["p99"] * 1.5 } }
    sample = { "pss_peak_bytes" => values["memory"].round, "rss_peak_bytes" => (values["memory"] * 1.3).round,
               "cpu_user_s" => cpu_s * 0.8, "cpu_system_s" => cpu_s * 0.2 }
    Rackbench::Trial::Record.new(**base, result: result, sample: sample)
  end

  def gauss(random)
    Math.sqrt(-2 * Math.log(1.0 - random.rand)) * Math.cos(2 * Math::PI * random.rand)
  end
end
