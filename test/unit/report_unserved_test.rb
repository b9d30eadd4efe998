# frozen_string_literal: true

require "test_helper"
require "json"
require_relative "../support/report_store"

# A trial whose server answered only some of its connections is flagged in
# every view with the likely cause; a warmup's failures are explained by
# what failed; compare shows each side's flags and refuses two experiments
# from different machines unless told.
describe "Rackbench::Report: unserved connections, warmup causes, machines in compare" do
  let(:dir) { Dir.mktmpdir }
  after { FileUtils.rm_rf(dir) }

  WEBRICK = ReportStore.dims(ruby: "ruby", server: "webrick", threads: 1)
  PUMA = ReportStore.dims(ruby: "ruby", server: "puma", threads: 1)

  # WEBrick 1x1 served 1 of 16 connections in every batch, its warmup lost
  # 15 requests to the timeout; Puma served all 16.
  def fields
    lambda do |dims, _batch, engine|
      served = dims["server"] == "webrick" ? 1 : 16
      engine["settings"].merge!("connections" => 16, "keepalive" => true, "timeout_s" => 2.0)
      engine["service"] = { "connections" => { "slots" => 16, "active" => 16, "served" => served,
                                               "unserved" => 16 - served, "unserved_slots" => (served...16).to_a,
                                               "max_wait_us" => served == 16 ? 1500.0 : 3_020_000.0 },
                            "streams" => nil }
      if served < 16
        engine["warmup"]["errors"]["timeout"] = 15
        engine["errors"]["timeout"] = 15
      end
      {}
    end
  end

  def with_report(configs = { WEBRICK => [5000, 5100, 4900], PUMA => [20_000, 20_100, 19_900] }, name: "quick",
                  environment: nil)
    results = File.join(dir, name)
    Rackbench::Store.open(results) do |store|
      id = ReportStore.fill(store, configs, name: name, fields: fields)
      store.db[:experiments].where(id: id).update(environment: JSON.generate(environment)) if environment
      yield Rackbench::Report.new(store), results
    end
  end

  UNSERVED = "batch 1: only 1 of 16 connections was served in the window (the longest wait 3.0s): WEBrick serves " \
             "one keep-alive connection per thread (1 thread): give it load.connections <= threads, or keepalive: false"

  it "flags WEBrick's unserved connections in JSON, terminal, CSV and HTML, and not Puma's" do
    with_report do |report, _|
      webrick, puma = report.configs.partition { |c| c.dims["server"] == "webrick" }.map(&:first)
      flags = webrick.to_h["flags"].select { |f| f["kind"] == "unserved_connections" }
      assert_equal [1, 2, 3], flags.map { |f| f["batch"] }
      assert_equal UNSERVED, flags.first["message"]
      refute(puma.to_h["flags"].any? { |f| %w[unserved_connections warmup_errors].include?(f["kind"]) })
      doc = report.to_h
      assert(doc["configs"].any? { |c| c["flags"].any? { |f| f["message"] == UNSERVED } })
      text = Rackbench::Report::Terminal.new(report).render
      assert_includes text, "c unserved connections"
      assert_match(/\| webrick .*\| +[A-Za-z]*c[A-Za-z]* +\|$/, text)
      assert_includes text, "webrick: #{UNSERVED}"
      csv = report.to_csv
      webrick_row = csv.lines.find { |line| line.include?("webrick") }
      assert_includes webrick_row, "unserved_connections"
      html = Rackbench::HtmlReport.new(doc).render
      assert_includes html, "only 1 of 16 connections was served in the window"
    end
  end

  it "explains warmup timeouts by the unserved connections, not by a login" do
    with_report do |report, _|
      webrick = report.configs.find { |c| c.dims["server"] == "webrick" }
      warmup = webrick.to_h["flags"].find { |f| f["kind"] == "warmup_errors" }
      assert_includes warmup["message"], "(timeout: 15): 15 of 16 connections were never answered: WEBrick serves " \
                                         "one keep-alive connection per thread"
      refute_includes warmup["message"], "login"
    end
  end

  describe "TrialCauses.warmup_errors_cause" do
    def trial(engine)
      Rackbench::Report::TrialEntry.new(Rackbench::Trial::Record.new(
        key: "k", batch: 1, position: 1, kind: "http", server: "puma", processes: 1, threads: 4, status: "ok",
        result: engine
      ))
    end

    def warmup(status: { "200" => 10 }, errors: {})
      { "requests" => 10, "failed" => 1, "status" => status, "errors" => errors }
    end

    it "names a login that failed, an @expect, an error status, a refused connection" do
      login = { "index" => 0, "name" => "login", "first" => true, "warmup" => { "status" => { "422" => 2 }, "errors" => {} } }
      cause = Rackbench::Report::TrialCauses
      assert_equal "the login (first entry login) failed",
                   cause.warmup_errors_cause(trial("entries" => [login]), warmup(status: { "422" => 2 }))
      assert_equal "responses did not show what their @expect says",
                   cause.warmup_errors_cause(trial({}), warmup(errors: { "expect" => 3 }))
      assert_equal "the app answered 500 (see its log)", cause.warmup_errors_cause(trial({}), warmup(status: { "500" => 1 }))
      assert_equal "the server refused or dropped connections",
                   cause.warmup_errors_cause(trial({}), warmup(errors: { "connect" => 1 }))
      assert_match(/\Arequests waited past the timeout while the server warmed up/,
                   cause.warmup_errors_cause(trial({}), warmup(errors: { "timeout" => 1 })))
    end

    it "names the server's stream limit for unserved h2c streams" do
      engine = { "settings" => { "streams" => 8 }, "h2" => { "server_max_concurrent_streams" => 4 },
                 "service" => { "connections" => { "unserved" => 0 },
                                "streams" => { "active" => 16, "served" => 8, "unserved" => 8 } } }
      counts = Rackbench::Report::TrialCauses.unserved(trial(engine))
      assert_equal "streams", counts["kind"]
      assert_match(/allows 4 concurrent streams per connection/,
                   Rackbench::Report::TrialCauses.unserved_cause(trial(engine), counts))
    end
  end

  describe "compare" do
    COMPARED_MACHINE = { "hostname" => "bench1", "cpu_model" => "Intel(R) Xeon(R) Platinum 8375C", "cpu_count" => 2,
                "kernel" => "6.1.0-26-cloud-amd64", "governor" => "unknown", "warnings" => [] }.freeze

    def compare(a_env, b_env, **options)
      @compared = (@compared || 0) + 1
      with_report({ PUMA => [20_000, 20_100, 19_900, 20_050, 19_950] }, name: "before#{@compared}",
                                                                         environment: a_env) do |a, _|
        with_report({ PUMA => [21_000, 21_100, 20_900, 21_050, 20_950] }, name: "after#{@compared}",
                                                                           environment: b_env) do |b, _|
          return Rackbench::Report::Compare.experiments(a, b, **options)
        end
      end
    end

    it "compares two experiments of the same machine, with each side's flags" do
      result = compare(COMPARED_MACHINE, COMPARED_MACHINE.merge("warnings" => ["load average 2.0"]))
      assert_nil result.machine_differences
      assert_nil result.to_a.first["machines_differ"]
      assert_equal [], result.to_a.first["a"]["flags"].select { |f| f["kind"] == "unserved_connections" }
      refute_includes result.terminal_table, "MACHINES DIFFER"
    end

    it "refuses two experiments from different machines, naming the difference" do
      other = COMPARED_MACHINE.merge("cpu_model" => "AMD EPYC 7R13", "kernel" => "6.5.0")
      error = assert_raises(Rackbench::UsageError) { compare(COMPARED_MACHINE, other) }
      assert_equal "A and B ran on different machines (cpu_model: Intel(R) Xeon(R) Platinum 8375C (A) vs AMD EPYC " \
                   "7R13 (B); kernel: 6.1.0-26-cloud-amd64 (A) vs 6.5.0 (B)): their ratio would measure the machines " \
                   "too; pass --different-machines to compare them anyway", error.message
      result = compare(COMPARED_MACHINE, other, different_machines: true)
      assert_equal [{ "key" => "cpu_model", "a" => COMPARED_MACHINE["cpu_model"], "b" => "AMD EPYC 7R13" },
                    { "key" => "kernel", "a" => COMPARED_MACHINE["kernel"], "b" => "6.5.0" }], result.to_a.first["machines_differ"]
      assert_match(/\AMACHINES DIFFER: A and B ran on different machines \(cpu_model: /, result.terminal_table)
    end

    it "shows a side's unserved connections in the comparison" do
      with_report({ WEBRICK => [5000] * 5 }, name: "before", environment: COMPARED_MACHINE) do |a, _|
        with_report({ WEBRICK => [5100] * 5 }, name: "after", environment: COMPARED_MACHINE) do |b, _|
          result = Rackbench::Report::Compare.experiments(a, b)
          assert(result.to_a.first["a"]["flags"].any? { |f| f["kind"] == "unserved_connections" })
          assert_includes result.terminal_table, "  A (ruby=ruby): #{UNSERVED}"
        end
      end
    end
  end
end
