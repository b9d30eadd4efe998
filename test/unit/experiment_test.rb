# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/experiments/experiment_support"

describe Rackbench::Experiment do
  include Rackbench::Test::ExperimentSupport

  describe "a minimal file" do
    let(:experiment) { build_experiment() }

    it "fills in every default" do
      assert_equal "t", experiment.name
      assert_equal 1, experiment.seed
      assert_equal 1, experiment.batches
      assert_equal [["ruby", "ruby", [], {}]], experiment.rubies.map { |r| [r.label, r.ruby, r.options, r.env] }
      assert_equal [%w[puma puma]], experiment.servers.map { |s| [s.label, s.name] }
      app = experiment.apps.first
      assert_equal ["rack-hello", true, nil], [app.name, app.builtin, app.path]
      assert_equal [nil] * 5, [app.health, app.load_path, app.expect_status, app.expect_content_type, app.expect_body],
                   "a built-in app's own manifest supplies what the file does not override"
      assert_equal [1], experiment.processes
      assert_equal [1], experiment.threads
      assert_equal({ "connections" => [16], "threads" => [1], "duration" => [10.0], "warmup" => [5.0],
                     "rate" => [nil], "keepalive" => [true], "requests" => [nil], "timeout" => [nil],
                     "cookies" => [nil], "headers" => [[]], "preset_cookies" => [[]], "protocol" => ["http1"],
                     "streams" => [1], "host" => [nil],
                     "tls" => [false], "tls_resume" => [true], "count" => [nil], "think" => [nil],
                     "warmup_count" => [nil], "workload" => ["http"], "clients" => [nil], "ramp" => [0.0],
                     "interval" => [nil], "broadcaster" => [nil], "message_bytes" => [nil] }, experiment.load)
      assert_equal({}, experiment.env)
      assert_equal [], experiment.exclude
    end

    it "is frozen all the way down" do
      assert_predicate experiment, :frozen?
      [experiment.rubies, experiment.rubies.first, experiment.rubies.first.options, experiment.load,
       experiment.load["duration"], experiment.configurations, experiment.configurations.first,
       experiment.configurations.first.dims, experiment.configurations.first.load, experiment.fingerprint,
       experiment.name, experiment.rubies.first.label, experiment.servers.first.label, experiment.apps.first.name,
       experiment.configurations.first.dims["ruby"], experiment.configurations.first.key].each do |part|
        assert_predicate part, :frozen?, part.inspect
      end
    end

    it "keeps the source text" do
      assert_includes experiment.source_text, "name: t"
      assert_equal "experiment.yml", experiment.source
    end
  end

  describe "the full fixture" do
    let(:experiment) { Rackbench::Experiment.load(fixture("full.yml"), **known) }

    it "reads every key" do
      assert_equal ["puma-vs-webrick", 42, 3], [experiment.name, experiment.seed, experiment.batches]
      yjit = experiment.rubies.last
      assert_equal ["ruby-yjit", "ruby", ["--yjit"], { "MALLOC_ARENA_MAX" => "2" }],
                   [yjit.label, yjit.ruby, yjit.options, yjit.env]
      puma, webrick = experiment.servers
      assert_equal ["puma", "puma", { "queue_requests" => false }], [puma.label, puma.name, puma.options]
      assert_equal ["webrick-default", "webrick", {}], [webrick.label, webrick.name, webrick.options]
      assert_equal [1, 2], experiment.processes
      assert_equal [1, 4], experiment.threads
      assert_equal ["10000", "600000"], experiment.env["RUBY_GC_HEAP_INIT_SLOTS"]
      assert_equal ["production"], experiment.env["RACK_ENV"]
    end

    it "resolves the user's app and request file against the file's directory" do
      app = experiment.apps.last
      assert_equal ["myapp", false, fixture("myapp"), "/up", "/posts", 200, "Posts"],
                   [app.name, app.builtin, app.path, app.health, app.load_path, app.expect_status, app.expect_body]
      assert_equal [fixture("requests.txt")], experiment.load["requests"]
    end

    it "converts durations to seconds whatever the spelling" do
      assert_equal [10.0], experiment.load["duration"]
      assert_equal [5.0], experiment.load["warmup"]
      assert_equal [0.5], experiment.load["timeout"]
    end

    it "resolves relative paths against the file, not the current directory" do
      Dir.chdir(Dir.tmpdir) do
        copy = Rackbench::Experiment.load(fixture("full.yml"), **known)
        assert_equal fixture("myapp"), copy.apps.last.path
      end
    end
  end

  describe "single values and lists" do
    it "accepts a single server, app or ruby without a list" do
      experiment = build_experiment("servers" => "webrick", "apps" => "rails-blog", "rubies" => "jruby")
      assert_equal ["jruby", "webrick", "rails-blog"],
                   [experiment.rubies.first.label, experiment.servers.first.label, experiment.apps.first.name]
    end

    it "treats a list of one value like the value" do
      assert_equal build_experiment("load" => { "connections" => 8 }).fingerprint,
                   build_experiment("load" => { "connections" => [8] }).fingerprint
    end

    it "accepts an absolute ruby path and uses it as the label" do
      experiment = build_experiment("rubies" => ["/opt/rubies/3.3.0/bin/ruby"])
      assert_equal "/opt/rubies/3.3.0/bin/ruby", experiment.rubies.first.label
    end

    it "accepts a built-in app as a mapping without path, overriding some of its settings" do
      app = build_experiment("apps" => [{ "name" => "rails-blog", "load_path" => "/posts", "expect_body" => "Posts" }]).apps.first
      assert_equal [true, nil, "/posts", "Posts"], [app.builtin, app.path, app.load_path, app.expect_body]
      assert_nil app.health
      assert_nil app.expect_status
    end

    it "resolves the user's app with defaults" do
      app = build_experiment("apps" => [{ "name" => "mine", "path" => "myapp", "expect_content_type" => "text/plain" }]).apps.first
      assert_equal [false, fixture("myapp"), "/", "/", 200, "text/plain", nil],
                   [app.builtin, app.path, app.health, app.load_path, app.expect_status, app.expect_content_type, app.expect_body]
    end

    it "takes an app's bundle_without, [] included, and leaves it nil when not given" do
      app = build_experiment("apps" => [{ "name" => "mine", "path" => "myapp", "bundle_without" => %w[test ci test] }]).apps.first
      assert_equal %w[test ci], app.bundle_without
      assert_predicate app.bundle_without, :frozen?
      assert_equal [], build_experiment("apps" => [{ "name" => "mine", "path" => "myapp", "bundle_without" => [] }])
        .apps.first.bundle_without
      assert_nil build_experiment("apps" => [{ "name" => "mine", "path" => "myapp" }]).apps.first.bundle_without
      assert_nil build_experiment().apps.first.bundle_without
    end

    it "refuses a bundle_without that is not a list of group names" do
      assert_config_error({ "apps" => [{ "name" => "mine", "path" => "myapp", "bundle_without" => "test" }] },
                          "apps[0].bundle_without: must be a list of Gemfile group names")
      assert_config_error({ "apps" => [{ "name" => "mine", "path" => "myapp", "bundle_without" => ["a b"] }] },
                          "apps[0].bundle_without[0]: \"a b\" is not a valid Gemfile group name")
    end

    it "changes the fingerprint with bundle_without only when given" do
      base = { "name" => "mine", "path" => "myapp" }
      plain = build_experiment("apps" => [base]).fingerprint
      refute_equal plain, build_experiment("apps" => [base.merge("bundle_without" => [])]).fingerprint
      refute_equal plain, build_experiment("apps" => [base.merge("bundle_without" => %w[test])]).fingerprint
    end

    it "allows null among the values of rate: closed and open loop side by side" do
      experiment = build_experiment("load" => { "rate" => [nil, 500] })
      assert_equal [nil, 500.0], experiment.dimensions["load.rate"]
    end
  end

  describe "default connections" do
    it "is 16 for small sweeps" do
      assert_equal [16], build_experiment("processes" => [1, 2], "threads" => [1, 4]).load["connections"]
    end

    it "is twice the most server threads for large sweeps, the same for every configuration" do
      experiment = build_experiment("processes" => [1, 4], "threads" => [1, 8])
      assert_equal [64], experiment.load["connections"]
      assert_equal [64], experiment.configurations.map { |c| c.load[:connections] }.uniq
    end
  end

  describe "#fingerprint" do
    let(:text) { File.read(fixture("full.yml")) }
    let(:base) { parse_yaml(text) }

    it "is a SHA-256 hex digest" do
      assert_match(/\A[0-9a-f]{64}\z/, base.fingerprint)
    end

    it "ignores comments, key order, list order, spelling and defaults written out" do
      reordered = parse_yaml(<<~YAML)
        # the same experiment, written differently
        load: { requests: requests.txt, timeout: 0.5, warmup: 5s, duration: 10, connections: [64, 16], threads: 2,
                keepalive: true }
        env: { RACK_ENV: production, RUBY_GC_HEAP_INIT_SLOTS: [600000, 10000] }
        threads: [4, 1]
        processes: [2, 1]
        batches: 3
        seed: 42
        name: puma-vs-webrick
        exclude: [{ processes: 2, server: webrick-default }]
        apps:
          - { name: myapp, path: ./myapp/, health: /up, load_path: /posts, expect_body: Posts }
          - rack-hello
        servers:
          - { label: webrick-default, name: webrick }
          - { options: { queue_requests: false }, name: puma }
        rubies:
          - { name: ruby-yjit, ruby: ruby, options: --yjit, env: { MALLOC_ARENA_MAX: "2" } }
          - ruby
      YAML
      assert_equal base.fingerprint, reordered.fingerprint
    end

    it "changes with anything that changes the trials" do
      changes = [
        ["seed: 42", "seed: 43"], ["batches: 3", "batches: 4"], ["duration: 10s", "duration: 11s"],
        ['options: ["--yjit"]', 'options: ["--yjit", "-W0"]'], ["threads: [1, 4]", "threads: [1, 2]"],
        ["expect_body: Posts", "expect_body: Post"], ["{ server: webrick-default, processes: 2 }", "{ server: puma, processes: 2 }"],
        ["queue_requests: false", "queue_requests: true"]
      ]
      changes.each do |from, to|
        assert_includes text, from
        refute_equal base.fingerprint, parse_yaml(text.sub(from, to)).fingerprint, "#{from} -> #{to}"
      end
    end
  end

  describe "settings added after 0.1" do
    STORED_BY_0_1 = <<~YAML
      name: stored-by-0.1
      seed: 7
      batches: 2
      rubies: [ruby, { name: ruby-yjit, ruby: ruby, options: ["--yjit"], env: { MALLOC_ARENA_MAX: "2" } }]
      servers: [puma, { name: puma, label: puma-b }]
      apps: [rack-hello, { name: rails-hello, load_path: /x }]
      processes: [1, 2]
      threads: 4
      load: { connections: 8, duration: 2s, warmup: 1s, rate: [null, 500], timeout: 2s }
      env: { RUBY_GC_HEAP_INIT_SLOTS: ["10000", "600000"] }
    YAML

    # rackbench 0.1 computed this fingerprint for the file above: --resume
    # after an upgrade finds the stored experiment only if it still matches.
    # (0.1's default timeout was 2 s, so 0.1 gave the file the same
    # fingerprint without its "timeout: 2s".)
    it "keep the fingerprint an experiment had under 0.1 while they have their defaults" do
      assert_equal "43473520a6f42547d95b256643ac36680619cf7ded7261c1f6855b08d84c5e4f",
                   Rackbench::Experiment.parse(STORED_BY_0_1).fingerprint
    end

    # Since 0.2 a file without load.timeout has it calibrated: another load
    # than 0.1's 2 s, so another experiment, which --resume does not mix
    # with the trials stored under 0.1.
    it "change the fingerprint of a file that relied on 0.1's 2 s timeout" do
      refute_equal "43473520a6f42547d95b256643ac36680619cf7ded7261c1f6855b08d84c5e4f",
                   Rackbench::Experiment.parse(STORED_BY_0_1.sub(", timeout: 2s }", " }")).fingerprint
    end

    it "change the fingerprint once set" do
      base = Rackbench::Experiment.parse(STORED_BY_0_1).fingerprint
      variants = [
        STORED_BY_0_1.sub("timeout: 2s }", "timeout: 2s, cookies: false }"),
        STORED_BY_0_1.sub("timeout: 2s }", "timeout: 2s, headers: { X-A: b } }"),
        STORED_BY_0_1.sub("timeout: 2s }", "timeout: 2s, preset_cookies: { a: b } }"),
        STORED_BY_0_1.sub("apps: [rack-hello,", "apps: [{ name: rack-hello, env: { A: b } },"),
        "#{STORED_BY_0_1}pass_env: [DATABASE_URL]\n",
        STORED_BY_0_1.sub("apps: [rack-hello,", "apps: [{ name: rack-hello, expect_session_body: Signed in },")
      ]
      variants.each { |text| refute_equal base, Rackbench::Experiment.parse(text).fingerprint, text }
    end

    it "reads pass_env, an app's env and load.cookies" do
      experiment = Rackbench::Experiment.parse(
        "#{STORED_BY_0_1.sub("apps: [rack-hello,", "apps: [{ name: rack-hello, env: { RAILS_ENV: staging } },")
                        .sub("timeout: 2s }", "timeout: 2s, cookies: [true, false] }")}pass_env: [SECRET_KEY_BASE]\n"
      )
      assert_equal ["SECRET_KEY_BASE"], experiment.pass_env
      assert_equal({ "RAILS_ENV" => "staging" }, experiment.apps.first.env)
      assert_equal({}, experiment.apps.last.env)
      assert_equal [true, false], experiment.dimensions["load.cookies"]
    end

    it "reads an app's expect_session_body, for the user's app and over a built-in one" do
      experiment = Rackbench::Experiment.parse(
        STORED_BY_0_1.sub("apps: [rack-hello,", "apps: [{ name: mine, path: #{Rackbench::Apps.builtin("rack-hello").dir}, expect_session_body: Signed in as me }, " \
                                                "{ name: mix, expect_session_body: Signed in as author8 }, rack-hello,")
      )
      mine, mix, hello = experiment.apps.first(3).map { |spec| Rackbench::App.resolve(spec) }
      assert_equal ["Signed in as me", "Signed in as author8", nil], [mine, mix, hello].map(&:expect_session_body)
      assert_equal "Signed in as author7", Rackbench::App.resolve(Rackbench::Experiment.parse(
        STORED_BY_0_1.sub("apps: [rack-hello,", "apps: [mix, rack-hello,")
      ).apps.find { |a| a.name == "mix" }).expect_session_body
    end

    it "reads load.headers and load.preset_cookies as the engine's lines, sorted, and passes them to every trial" do
      experiment = Rackbench::Experiment.parse(
        STORED_BY_0_1.sub("timeout: 2s }",
                          "timeout: 2s, headers: { X-Tenant: acme, Accept: text/html }, preset_cookies: { theme: dark, consent: 1 } }")
      )
      assert_equal [["Accept: text/html", "X-Tenant: acme"]], experiment.load["headers"]
      assert_equal [["consent=1", "theme=dark"]], experiment.load["preset_cookies"]
      config = experiment.configurations.first
      assert_equal ["Accept: text/html", "X-Tenant: acme"], config.load[:headers]
      assert_equal ["consent=1", "theme=dark"], config.load[:cookie_presets]
      plain = Rackbench::Experiment.parse(STORED_BY_0_1).configurations.first
      assert_equal [[], []], plain.load.values_at(:headers, :cookie_presets)
    end
  end

  describe "inside" do
    it "counts by default, and is off when asked, YAML's bare off included" do
      assert_equal "counting", build_experiment.inside
      assert_equal "off", build_experiment("inside" => "off").inside
      assert_equal "off", parse_yaml("name: t\nservers: [puma]\napps: [rack-hello]\ninside: off\n").inside
      assert_equal "off", build_experiment("inside" => "off").with(seed: 9).inside
    end

    it "is in the fingerprint when off only: an experiment stored before the key keeps its own" do
      plain = build_experiment
      assert_equal plain.fingerprint, build_experiment("inside" => "counting").fingerprint
      refute_equal plain.fingerprint, build_experiment("inside" => "off").fingerprint
    end

    it "names a mode it does not know" do
      assert_config_error({ "inside" => "count" }, "inside: unknown inside mode \"count\"", "known: counting, off")
      assert_config_error("name: t\nservers: [puma]\napps: [rack-hello]\ninside: on\n", "inside: unknown inside mode \"on\"")
    end
  end

  describe "#with" do
    it "returns a copy with another seed and its own fingerprint" do
      experiment = build_experiment("seed" => 5)
      copy = experiment.with(seed: 6)
      assert_equal [5, 6], [experiment.seed, copy.seed]
      refute_equal experiment.fingerprint, copy.fingerprint
      assert_equal experiment.fingerprint, copy.with(seed: 5).fingerprint
      assert_equal 4, experiment.with(batches: 4).batches
      assert_predicate copy, :frozen?
    end

    it "validates the new values" do
      error = assert_raises(Rackbench::ConfigError) { build_experiment.with(seed: -1) }
      assert_includes error.message, "seed: must be an integer >= 0"
      error = assert_raises(Rackbench::ConfigError) { build_experiment.with(batches: 0) }
      assert_includes error.message, "batches: must be an integer >= 1"
    end
  end

  describe ".default" do
    let(:experiment) { Rackbench::Experiment.default(**known) }

    it "is Rack hello world on Puma and WEBrick with a small sweep" do
      assert_equal %w[puma webrick], experiment.servers.map(&:name)
      assert_equal ["rack-hello"], experiment.apps.map(&:name)
      assert_equal 5, experiment.configurations.size
      webrick = experiment.configurations.select { |c| c.server.name == "webrick" }
      assert_equal [[1, 4]], webrick.map { |c| [c.processes, c.threads] }
    end

    it "gives WEBrick a load it can serve: no more connections than its threads" do
      webrick = experiment.configurations.select { |c| c.server.name == "webrick" }
      assert(webrick.all? { |c| c.load[:connections] <= c.threads }, webrick.map(&:to_s).inspect)
    end

    it "fits in three minutes by its own estimate" do
      plan = Rackbench::Experiment::Plan.new(experiment)
      assert_operator plan.estimated_s, :<=, 180
      assert_equal 25, plan.size
    end

    it "loads with the real server list and built-in apps" do
      experiment = Rackbench::Experiment.default
      assert_equal "quick", experiment.name
    end
  end

  describe ".known_servers" do
    it "falls back to the adapters rackbench knows" do
      assert_includes Rackbench::Experiment.known_servers, "puma"
      assert_includes Rackbench::Experiment::KNOWN_SERVERS, "agoo"
    end
  end
end
