# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"

describe Rackbench::TrialReport do
  let(:dir) { Dir.mktmpdir }
  after { FileUtils.rm_rf(dir) }

  def fill(store)
    id = store.find_or_create_experiment(name: "rep", fingerprint: "f" * 64, seed: 1, batches: 2,
                                         source_text: "name: rep", environment: {})
    base = { kind: "http", ruby: "ruby", server: "puma", app: "rack-hello", processes: 1, threads: 4,
             dims: { "ruby" => "ruby", "server" => "puma", "load.connections" => 8 } }
    store.save_trial(id, Rackbench::Trial::Record.new(
      **base, key: "a#1", batch: 1, position: 1, status: "ok",
              result: { "rps" => 1234.5, "latency_us" => { "p50" => 100.0, "p99" => 2500.0 } },
              sample: { "rss_peak_bytes" => 30_000_000, "pss_peak_bytes" => 25_000_000 }
    ))
    store.save_trial(id, Rackbench::Trial::Record.new(**base, key: "a#2", batch: 2, position: 2, status: "failed",
                                                              reason: "server not ready after 60s"))
    id
  end

  it "prints a table with varying dimensions as columns and the failures listed" do
    Rackbench::Store.open(dir) do |store|
      fill(store)
      text = Rackbench::TrialReport.new(store).table
      assert_match(/load\.connections/, text)
      assert_match(/1234\.5/, text)
      assert_match(/2\.50ms/, text)
      assert_match(/30\.0 MB/, text)
      assert_match(/#2: server not ready after 60s/, text)
    end
  end

  it "names what is missing" do
    Rackbench::Store.open(dir) do |store|
      error = assert_raises(Rackbench::UsageError) { Rackbench::TrialReport.new(store, name: "nope") }
      assert_match(/no experiment named 'nope'/, error.message)
    end
  end
end

describe "rackbench run/report/servers commands" do

  # With a fake ruby alone on PATH and an empty home: no real ruby (nor
  # Debian's JRuby, seconds to start) is probed.
  def with_only_a_fake_ruby
    Dir.mktmpdir("rackbench-cli") do |tmp|
      bin = File.join(tmp, "bin")
      FileUtils.mkdir_p([bin, File.join(tmp, "home")])
      ruby = File.join(bin, "ruby")
      FileUtils.cp(File.expand_path("../fixtures/rubies/fake_ruby", __dir__), ruby)
      File.chmod(0o755, ruby)
      probe = { "engine" => "ruby", "version" => "3.3.0", "ruby_version" => "3.3.0", "abi_version" => "3.3.0",
                "description" => "ruby 3.3.0 (fake)", "platform" => "x86_64-linux", "executable" => ruby,
                "exe" => ruby, "jit" => ["yjit"] }
      File.write("#{ruby}.probe", "RACKBENCH_PROBE #{JSON.generate(probe)}\n")
      # Under `bundle exec`, discovery restores PATH from BUNDLER_ORIG_PATH.
      names = %w[PATH HOME BUNDLER_ORIG_PATH]
      saved = names.to_h { |name| [name, ENV.fetch(name, nil)] }
      ENV.update("PATH" => bin, "HOME" => File.join(tmp, "home"))
      ENV["BUNDLER_ORIG_PATH"] = bin if saved["BUNDLER_ORIG_PATH"]
      yield tmp
    ensure
      saved&.each { |name, value| value.nil? ? ENV.delete(name) : ENV[name] = value }
    end
  end

  it "prints the built-in plan with --dry-run" do
    with_only_a_fake_ruby do |tmp|
      code, out, = cli("run", "--dry-run", "--results", File.join(tmp, "results"))
      assert_equal 0, code
      assert_match(/Plan for quick .*25 trials/, out)
      assert_match(/server=webrick/, out)
    end
  end

  it "refuses two experiment files and unknown options in one line" do
    assert_equal [2, "", "rackbench: run takes at most one experiment file (see rackbench run --help)\n"],
                 cli("run", "a.yml", "b.yml")
    code, _, err = cli("run", "--frobnicate")
    assert_equal 2, code
    assert_match(/invalid option: --frobnicate/, err)
    code, _, err = cli("run", "/nonexistent/exp.yml", "--dry-run")
    assert_equal 2, code
    assert_equal "rackbench: experiment file not found: /nonexistent/exp.yml\n", err
  end

  it "says there is nothing to report in an empty results directory" do
    code, _, err = cli("report", "--results", Dir.mktmpdir)
    assert_equal 2, code
    assert_match(/no results in/, err)
  end

  it "lists the server adapters, as a table and as JSON" do
    code, out, = cli("servers")
    assert_equal 0, code
    %w[puma webrick unicorn pitchfork falcon thin iodine agoo].each { |name| assert_match(/\b#{name}\b/, out) }
    code, out, = cli("servers", "--json")
    assert_equal 0, code
    puma = JSON.parse(out).find { |s| s["name"] == "puma" }
    assert puma["jruby"]
    assert_equal ['gem "puma"'], puma["gems"]["ruby"]
    assert_equal "puma", puma["server_gem"]
    assert_equal Rackbench::Servers.fetch("puma").option_schema.keys, puma["options"].map { |o| o["key"] }
    assert_equal({ "key" => "preload", "type" => "true or false" }, puma["options"].first.slice("key", "type"))
    assert_empty JSON.parse(out).find { |s| s["name"] == "webrick" }["options"]
  end
end
