# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"
require "rackbench/capacity"
require "cgi"

# WebSocket trials (Trial::Ws) orchestrated against fakes: the experiment's
# WebSocket workloads and their one-line errors, the engine's settings a
# trial builds, what the plan leaves out and why, the record (the engine's
# document, the server's idle memory, the verdict) and the websocket
# companion's proof of who served the upgrade.
#
# The unit tier loads every file in one process: the files' describe blocks
# share the top level, so these define no constant there but this module.
module WsTrialsTestResults
  # A fresh copy of the engine's document of a workload (broadcast, echo)
  # from test/fixtures/engine_result_ws_WORKLOAD.json.
  def ws_result(workload)
    JSON.parse(File.read(File.expand_path("../fixtures/engine_result_ws_#{workload}.json", __dir__)))
  end
end

describe "WebSocket trials" do
  include WsTrialsTestResults

  let(:dir) { Dir.mktmpdir("rackbench-ws") }
  after { FileUtils.rm_rf(dir) }

  def parse(text)
    Rackbench::Experiment.parse(text, source: "ws.yml", base_dir: dir)
  end

  def error_of(text)
    assert_raises(Rackbench::ConfigError) { parse(text) }.message
  end

  describe "the experiment file" do
    it "makes a WebSocket experiment of its own kind, its clients a dimension" do
      experiment = parse(<<~YAML)
        name: ws
        servers: [puma]
        apps: [ws-rack]
        load: { workload: broadcast, clients: [10, 20], interval: 100ms, broadcaster: http }
      YAML
      assert_equal "ws", experiment.trial_kind
      assert_equal %w[ruby server app processes threads load.clients], experiment.dimensions.keys
      load = experiment.configurations.first.load
      assert_equal ["broadcast", 10, 0.1, "http", 64, 10.0], load.values_at(:workload, :clients, :interval_s, :broadcaster,
                                                                            :message_bytes, :timeout_s)
    end

    it "keeps the fingerprint of an HTTP experiment written before the WebSocket keys" do
      text = "name: h\nservers: [puma]\napps: [rack-hello]\n"
      assert_equal parse(text).fingerprint, parse("#{text}load: { workload: http }\n").fingerprint
    end

    it "names every key that does not fit its workload, in one line" do
      base = "name: ws\nservers: [puma]\napps: [ws-rack]\n"
      {
        "load: { workload: [http, echo] }" => "ws.yml: load.workload: http and WebSocket workloads",
        "load: { clients: 5 }" => "ws.yml: load.clients: is a key of WebSocket workloads",
        "load: { workload: echo, connections: 5 }" => "ws.yml: load.connections: is a key of HTTP requests",
        "load: { workload: connect, interval: 1s }" => "ws.yml: load.interval: applies to the broadcast workload only",
        "load: { workload: broadcast, rate: 10 }" => "ws.yml: load.rate: applies to the echo workload only",
        "load: { workload: [echo, connect], rate: 10 }" => "ws.yml: load.rate: paces the echo workload's messages",
        "load: { workload: echo, clients: 2, threads: 3 }" => "ws.yml: load.threads: 3 engine threads but only 2",
        "load: { workload: broadcast, broadcaster: carrier }" => "ws.yml: load.broadcaster: unknown broadcaster",
        "load: { workload: echo, clients: 0 }" => "ws.yml: load.clients: must be an integer 1-100000",
        "load: { workload: echo }\nproxy: nginx" => "ws.yml: proxy: a WebSocket workload goes to the server itself",
        "load: { workload: echo }\napps: [{ name: ws-rack, websocket: { path: ws } }]" => "ws.yml: apps[0].websocket.path:"
      }.each do |yaml, expected|
        text = yaml.include?("apps:") ? "name: ws\nservers: [puma]\n#{yaml}\n" : "#{base}#{yaml}\n"
        message = error_of(text)
        assert message.start_with?(expected), "#{yaml}: #{message}"
        assert_equal 1, message.lines.size, message
      end
    end
  end

  describe "a run" do
    def run_experiment(yaml, result: ws_result("broadcast"), servers: nil, **companions)
      engine = Fakes::Engine.new(result: result)
      launcher = Fakes::Launcher.new
      out = StringIO.new
      Rackbench::Runner.new(source: parse(yaml), results_dir: File.join(dir, "results"), out: out, err: StringIO.new,
                            installs: [Fakes.install],
                            layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                            environment: { "test" => true }, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                            collaborators: { engine: engine, launcher: servers || launcher, bundles: Fakes::Bundles.new,
                                             companions: Fakes.companions(websocket: { sampler: ->(_s) { IdleSampler.new } },
                                                                          **companions) },
                            watchdog: Fakes::Watchdog.new).run
      [engine, Rackbench::Store.open(File.join(dir, "results"), &:trials), out.string]
    end

    # The server idle after boot: a third less than in the window.
    class IdleSampler < Fakes::Sampler
      def stop = SUMMARY.merge(pss_mean_bytes: 25_000_000, rss_mean_bytes: 33_000_000)
    end

    it "builds the engine's settings from the app's websocket and stores what the trial measured" do
      engine, records, = run_experiment(<<~YAML)
        name: ws
        servers: [puma]
        apps: [ws-rack]
        load: { workload: broadcast, clients: 4, interval: 100ms, duration: 1s, warmup: 0s, broadcaster: http }
      YAML
      settings = engine.settings.first
      assert_kind_of Rackbench::WsLoadSettings, settings
      assert_match %r{\Aws://127\.0\.0\.1:\d+/ws/broadcast\z}, settings.url
      assert_match %r{\Ahttp://127\.0\.0\.1:\d+/broadcast\z}, settings.broadcast_url
      assert_equal [4, 0.1, false, 10.0], [settings.clients, settings.interval_s, settings.cable, settings.timeout_s]
      record = records.first
      assert_equal ["ws", "ok"], [record.kind, record.status], record.reason
      assert_equal({ "pss_bytes" => 25_000_000, "rss_bytes" => 33_000_000, "processes" => 1 }, record.websocket["idle"])
      assert_equal "broadcast", record.load_settings["workload"]
      reading = record.reading
      assert_equal 0.9, reading.delivery_ratio(record)
      # (29 MB in the window - 25 MB idle) over the 4 clients connected.
      assert_equal 1_000_000.0, reading.memory_per_connection_bytes(record)
      # 2 s of the server's CPU over the window's 10 broadcasts.
      assert_equal 200_000.0, reading.cpu_us_per_broadcast(record)
      assert_equal "msg/s", record.rate_unit
    end

    it "shows the WebSocket figures in every view of the report" do
      run_experiment(<<~YAML)
        name: ws
        servers: [puma]
        apps: [ws-rack]
        load: { workload: broadcast, clients: 4, interval: 100ms, duration: 1s, warmup: 0s }
      YAML
      report = Rackbench::Store.open(File.join(dir, "results")) { |store| Rackbench::Report.new(store) }
      entry = report.to_h["configs"].first
      assert_equal [4, 4, 0.9, 1_000_000.0, 200_000.0],
                   entry.values_at("ws_clients", "ws_clients_requested", "delivery_ratio", "memory_per_connection_bytes",
                                   "cpu_us_per_broadcast")
      assert_equal({}, entry["ws_connection_failures"])
      assert_operator entry["rtt_p95_us"], :>, 0
      terminal = Rackbench::Report::Terminal.new(report).render
      %w[clients delivery mem/conn CPU/bcast].each { |heading| assert_includes terminal, heading }
      csv = Rackbench::Report::Csv.new(report).render
      %w[ws_clients delivery_ratio memory_per_connection_bytes cpu_us_per_broadcast rtt_p95_us].each do |name|
        assert_includes csv.lines.first, name
      end
    end

    it "leaves out what cannot run, with the reason" do
      _, records, out = run_experiment(<<~YAML)
        name: ws
        servers: [unicorn, puma]
        processes: [1, 2]
        apps: [ws-rack]
        load: { workload: broadcast, clients: 4, duration: 1s, warmup: 0s }
      YAML
      assert_equal [["puma", 1]], records.map { |r| [r.server, r.processes] }
      assert_includes out, "unicorn: rackbench does not run WebSocket workloads on it"
      assert_includes out, "ws-rack relays a broadcast to the clients of its own process: broadcast needs processes 1"
    end

    it "fails a trial whose clients failed or were lost beyond the budget, naming why" do
      result = ws_result("echo")
      result["lost"]["total"] = 2
      result["lost"]["by_kind"]["malformed"] = 2
      result["lost"]["reasons"]["malformed"] = "a frame with a reserved bit set"
      _, records, = run_experiment(<<~YAML, result: result)
        name: ws
        servers: [puma]
        apps: [ws-rack]
        load: { workload: echo, clients: #{result["settings"]["clients"]}, duration: 1s, warmup: 0s }
      YAML
      record = records.first
      assert_equal "failed", record.status
      assert_includes record.reason, "lost malformed x 2: a frame with a reserved bit set"
      assert_equal 2, record.reading.connection_failures(record)["malformed"]
    end
  end

  describe "the proof of who served the upgrade" do
    def part(adapter: "puma", builtin: true, answer:)
      config = parse("name: ws\nservers: [#{adapter}]\napps: [ws-rack]\nload: { workload: echo }\n").configurations.first
      app = Rackbench::App.resolve(config.app)
      app = app.dup.tap { |a| a.builtin = builtin }
      scene = Rackbench::Trial::Http::Companion::Scene.new(trial: Struct.new(:config).new(config), app: app,
                                                           adapter: Rackbench::Servers.fetch(adapter))
      companion = Rackbench::Trial::Http.companions.fetch(:websocket)
      companion.new(nil, probe: ->(**_) { answer }).part(scene)
    end

    let(:server) { Struct.new(:host).new("127.0.0.1") }
    let(:identity) { { "processes" => [{ "pid" => 41 }, { "pid" => 42 }] } }

    def answer(proof) = Rackbench::WsProbe::Answer.new(proof: proof, protocol: nil, headers: {})

    it "joins the identity record when a proven process served it through the server's own API" do
      part(answer: answer("pid" => 42, "via" => "rack.hijack", "server" => "puma")).prove(server, 9, identity)
      assert_equal 42, identity["websocket"]["proof"]["pid"]
      assert_equal "/ws/echo?rackbench_proof=1", identity["websocket"]["path"]
    end

    it "refuses a process the identity check did not prove, another API, or a built-in app's missing proof" do
      { answer("pid" => 7, "via" => "rack.hijack") => "served by pid 7, not one of the server's proven processes (41, 42)",
        answer("pid" => 41, "via" => "rack.upgrade") => "came through rack.upgrade, not puma's rack.hijack",
        answer(nil) => "answered without the app's proof" }.each do |given, expected|
        error = assert_raises(Rackbench::SetupError) { part(answer: given).prove(server, 9, {}.merge(identity)) }
        assert_includes error.message, expected
      end
      # A user's own app need only answer the upgrade.
      found = part(builtin: false, answer: answer(nil)).prove(server, 9, {}.merge(identity))
      assert_equal "upgrade answered", found["proof"]
    end
  end
end

describe "a broadcast's capacity" do
  include WsTrialsTestResults

  def parse(text)
    Rackbench::Experiment.parse(text, source: "cap.yml", base_dir: Dir.pwd)
  end

  def base = "name: bc\nservers: [puma]\napps: [ws-rack]\n"

  it "searches the clients a broadcast reaches, each step an experiment with its clients" do
    experiment = parse("#{base}load: { workload: broadcast, interval: 100ms }\n" \
                       "capacity: { p95: 200ms, min_delivery: 99%, start_clients: 100, max_clients: 800 }\n")
    settings = experiment.capacity
    assert settings.broadcast?
    assert_equal ["clients", 100.0, 800.0, 0.99], [settings.unit, settings.start_rate, settings.max_rate,
                                                    settings.min_delivery_ratio]
    assert_equal "broadcast p95 <= 200.00ms, delivery >= 99%", settings.target_text
    driver = Rackbench::Capacity::Driver.new(experiment, steps: nil)
    step = driver.step_experiment(driver.jobs.first)
    assert_equal "bc.capacity.c1.b1.s01.n100", step.name
    assert_equal [100], step.configurations.map { |c| c.load[:clients] }
    assert_equal "ws", step.trial_kind
  end

  it "names what a broadcast's search cannot take, in one line" do
    {
      "load: { workload: echo }\ncapacity: { p95: 1s }" => "cap.yml: capacity: of a WebSocket workload searches the clients",
      "load: { workload: broadcast, clients: 9 }\ncapacity: { p95: 1s }" => "cap.yml: load.clients: cannot be set with capacity",
      "load: { workload: broadcast }\ncapacity: { p95: 1s, start_rate: 5 }" => "cap.yml: capacity.start_rate: unknown key",
      "load: { workload: broadcast }\ncapacity: { p95: 1s, min_delivery: 2 }" => "cap.yml: capacity.min_delivery: must be a share",
      "load: { workload: broadcast }\ncapacity: { p95: 1s, start_clients: 900, max_clients: 10 }" =>
        "cap.yml: capacity.start_clients: 900 is above capacity.max_clients 10"
    }.each do |yaml, expected|
      message = assert_raises(Rackbench::ConfigError) { parse("#{base}#{yaml}\n") }.message
      assert message.start_with?(expected), "#{yaml}: #{message}"
    end
  end

  describe "the judge of a step" do
    let(:settings) do
      parse("#{base}load: { workload: broadcast }\ncapacity: { p95: 50ms, min_delivery: 99% }\n").capacity
    end

    def judge(result, clients: 4, ok: true)
      Rackbench::Capacity::BroadcastJudge.call(settings: settings, clients: clients, ok: ok, reason: nil, result: result)
    end

    def result(delivered: 40, rtt_ms: 10, saturated: false)
      data = ws_result("broadcast")
      broadcast = data["broadcast"]
      broadcast["delivered"] = delivered
      broadcast["missing"] = broadcast["expected"] - delivered
      broadcast["delivery_ratio"] = delivered.fdiv(broadcast["expected"])
      ns = rtt_ms * 1_000_000
      broadcast["rtt_histogram"].merge!("total" => 10, "min_ns" => ns, "max_ns" => ns, "mean_ns" => ns.to_f,
                                        "m2_ns2" => 0.0, "buckets" => [[ns, ns + 1, 10]])
      data["cpu"]["saturated"] = saturated
      data
    end

    it "passes within the target and the delivery, fails on either, and concludes nothing from a saturated engine" do
      assert judge(result).pass?
      slow = judge(result(rtt_ms: 80))
      assert_equal [:fail, "broadcast p95 80.00ms above 50.00ms"], [slow.status, slow.reason]
      # The server that drops one broadcast in ten fails on delivery, however fast the rest.
      dropped = judge(result(delivered: 36))
      assert_equal :fail, dropped.status
      assert_includes dropped.reason, "delivery 90.000% under 99%"
      assert judge(result(saturated: true)).invalid?
      assert judge(nil, ok: false).invalid?
    end
  end
end

describe "the HTML report of WebSocket configurations" do
  include WsTrialsTestResults
  require "support/report_store"

  it "draws the round trips against the clients, one line per configuration, when the clients vary" do
    dir = Dir.mktmpdir("rackbench-ws-html")
    html = Rackbench::Store.open(dir) do |store|
      configs = [250, 500].product(%w[puma falcon]).to_h do |clients, server|
        [ReportStore.dims(ruby: "r34", server: server).merge("app" => "cable-rails", "load.clients" => clients), [clients, clients]]
      end
      ReportStore.fill(store, configs, fields: lambda { |dims, _, _|
        result = ws_result("broadcast")
        result["connect"]["connected"] = dims["load.clients"]
        { kind: "ws", result: result, websocket: { "idle" => { "pss_bytes" => 20_000_000 } } }
      })
      Rackbench::HtmlReport.new(JSON.parse(JSON.generate(Rackbench::Report.new(store).to_h))).render
    end
    assert_includes html, %(id="ws-round-trips")
    spec = JSON.parse(CGI.unescapeHTML(html[%r{<script type="application/json" id="spec-ws-round-trips">(.*?)</script>}m, 1]))
    rows = spec.dig("data", "values")
    assert_equal %w[falcon puma], rows.map { |r| r["config"] }.uniq.sort
    assert_equal [250, 500], rows.map { |r| r["clients"] }.uniq.sort
    assert_equal %w[p50 p95], rows.map { |r| r["percentile"] }.uniq.sort
  ensure
    FileUtils.rm_rf(dir)
  end
end

describe "the websocket column's migration" do
  require "support/old_store"
  require "sequel"

  let(:dir) { Dir.mktmpdir("rackbench-ws-migration") }
  after { FileUtils.rm_rf(dir) }

  # How many migrations come before the one that adds trials.websocket
  # (found by applying them in turn: a merge may renumber it).
  def before_websocket
    db = Sequel.sqlite
    Rackbench::Store::Schema::MIGRATIONS.each_with_index do |migration, i|
      migration.call(db)
      return i if db.table_exists?(:trials) && db[:trials].columns.include?(:websocket)
    end
    flunk "no migration adds trials.websocket"
  ensure
    db&.disconnect
  end

  it "is the last, after publish's regressions: stored trials read back without it, new ones with it" do
    index = before_websocket
    assert_equal Rackbench::Store::Schema::VERSION - 1, index
    experiment = OldStore.create(File.join(dir, "results.db"), version: index, rackbench_version: "0.3.0",
                                 retried: false, row: {})
    idle = { "idle" => { "pss_bytes" => 20_000_000, "rss_bytes" => 30_000_000, "processes" => 2 } }
    Rackbench::Store.open(dir) do |store|
      assert store.db.table_exists?(:regressions), "publish's migration ran before"
      assert_equal [["kept", nil]], store.trials.map { |t| [t.key, t.websocket] }
      store.save_trial(experiment, Rackbench::Trial::Record.new(key: "new", kind: "ws", status: "ok", websocket: idle))
      assert_equal idle, store.trials.find { |t| t.key == "new" }.websocket
    end
  end
end
