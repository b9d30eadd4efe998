# frozen_string_literal: true

require "test_helper"
require "json"
require "csv"

# A results database written by rackbench 0.1 (test/fixtures/stores/
# v0.1-results.db, made by that release; its engine documents' requests and
# duration_s were then set to the figures 0.1 copied into its columns, and
# the golden reports made again by 0.1, unchanged) opens, is upgraded in place and
# reports the same figures: the CSV byte for byte, the terminal table line
# for line (the report has grown sections, not changed its figures).
describe "a results database of rackbench 0.1" do
  FIXTURES = File.expand_path("../fixtures/stores", __dir__)
  let(:dir) { Dir.mktmpdir("rackbench-upgrade") }
  after { FileUtils.rm_rf(dir) }

  def results
    FileUtils.cp(File.join(FIXTURES, "v0.1-results.db"), File.join(dir, "results.db"))
    dir
  end

  # assert_equal, or assert_nil for a nil (minitest 6 refuses nil in assert_equal).
  def assert_same_value(expected, actual, message)
    expected.nil? ? assert_nil(actual, message) : assert_equal(expected, actual, message)
  end

  it "is upgraded to the current schema, keeping every trial" do
    Rackbench::Store.open(results) do |store|
      assert_equal Rackbench::Store::Schema::VERSION, store.db[:rackbench_schema].get(:version)
      trials = store.trials
      assert_equal 11, trials.size
      assert(trials.all? { |t| t.identity.nil? && t.machine.nil? }, "0.1 recorded neither")
      assert(trials.all? { |t| t.kind == "http" })
      ok = trials.select(&:ok?)
      assert_equal 10, ok.size
      assert(ok.all? { |t| t.rate.positive? && t.latency_us["p99"] && t.pss_peak_bytes == 30_000_000 },
             "every figure survives the move into the record's documents")
    end
  end

  # Byte for byte in every column 0.1 wrote; the inside figures' columns
  # (configs.inside) and the proxy's come after them, so a script reading 0.1's columns by
  # place still reads the same values.
  it "reports the same CSV as 0.1 did" do
    code, out, err = cli("report", "--results", results, "--csv")
    assert_equal 0, code, err
    golden = CSV.parse(File.read(File.join(FIXTURES, "v0.1-report.csv")))
    now = CSV.parse(out)
    assert_equal golden.size, now.size
    golden.zip(now).each { |old, new| assert_equal old, new.first(old.size) }
    inside = Rackbench::Report::InsideSummary::FIGURES.keys.flat_map { |n| %W[#{n}_median #{n}_ci95_low #{n}_ci95_high] }
    proxy = %w[cache_hit_ratio proxy_cpu_cores proxy_memory_peak_bytes requests_per_day] # schema 6's, after them
    # Columns added since come after 0.1's, in the order they were added.
    instructions = %w[instructions_per_request_median instructions_per_request_ci95_low instructions_per_request_ci95_high
                      instructions_per_request_cv instructions_batches instructions_ratio instructions_ratio_ci95_low
                      instructions_ratio_ci95_high instructions_verdict]
    tls = %w[tls_handshake_us tls_resumed_handshake_us tls_handshake_share] # load.tls's
    services = Rackbench::Services.names.product(%w[cpu_cores cpu_us_per_request memory_peak_bytes]).map { |s, f| "#{s}_#{f}" }
    cycles = %w[cycles_per_request_median cycles_per_request_ci95_low cycles_per_request_ci95_high cycles_ratio
                cycles_ratio_ci95_low cycles_ratio_ci95_high cycles_verdict]
    websocket = %w[ws_clients ws_clients_requested ws_time_to_all_s ws_connection_failures rtt_p95_us delivery_ratio
                   memory_per_connection_bytes cpu_us_per_broadcast] # a WebSocket workload's, empty for HTTP
    assert_equal inside + proxy + %w[mb_per_s mb_per_s_ci95_low mb_per_s_ci95_high] + tls + %w[differing_gems] + instructions +
                 services + cycles + websocket, now[0].drop(golden[0].size)
  end

  it "prints the same table, bars and flags, and says what it cannot know" do
    # --wide: 0.1 printed every table whole, whatever the width.
    code, out, err = cli("report", "--results", results, "--wide")
    assert_equal 0, code, err
    golden = File.read(File.join(FIXTURES, "v0.1-report.txt")).lines
    table = golden.take_while { |line| !line.start_with?("Flags (") }
    assert_equal table.join, out.lines.first(table.size).join
    assert_includes out, "  ruby-yjit: 1 failed trial(s); batch 3: server not ready after 60s"
    assert_includes out, "  ruby: not recorded (stored before rackbench checked identities)"
  end

  # The same figures in the JSON document: every key 0.1 wrote, for every
  # configuration and trial, with the same value.
  it "reports the same figures in its JSON document" do
    code, out, err = cli("report", "--results", results, "--json")
    assert_equal 0, code, err
    now = JSON.parse(out)
    before = JSON.parse(File.read(File.join(FIXTURES, "v0.1-report.json")))
    assert_equal before["configs"].size, now["configs"].size
    before["configs"].zip(now["configs"]).each do |old, new|
      old.each { |key, value| assert_same_value value, new[key], "configs #{old["id"]} #{key}" }
    end
    before["trials"].zip(now["trials"]).each do |old, new|
      old.each { |key, value| assert_same_value value, new[key], "trial #{old["key"]} #{key}" }
    end
    %w[dimensions rate_unit].each { |key| assert_equal before[key], now[key], key }
  end
end
