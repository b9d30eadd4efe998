# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require_relative "../fixtures/fakes"

# HTTP/2 (h2c) on the Ruby side: the settings and the experiment keys that
# name it, the engine's argv, the result's new fields, which servers take
# it, and the verdict on a server that does not speak it. The engine's own
# HTTP/2 is tested in test/c/test_h2_client.c and
# test/integration/load_engine_h2_test.rb.
describe "load.protocol h2c" do
  let(:dir) { Dir.mktmpdir("rackbench-h2c") }
  after { FileUtils.rm_rf(dir) }

  def build(**options)
    Rackbench::LoadSettings.build(url: "http://127.0.0.1:1/", **options)
  end

  def h2_result(**h2)
    doc = JSON.parse(JSON.generate(Fakes::ENGINE_RESULT))
    doc["settings"]["protocol"] = "h2c"
    doc["settings"]["streams"] = 4
    doc["body_bytes"] = 400 * 8_388_608
    doc["mb_per_s"] = 1677.722
    doc["h2"] = { "not_h2c_connections" => 0, "protocol_errors" => 0, "reason" => nil, "goaways" => 0,
                  "goaway_codes" => {}, "resets" => {}, "server_max_concurrent_streams" => 100 }.merge(h2.transform_keys(&:to_s))
    doc
  end

  describe Rackbench::LoadSettings do
    it "is http1 with one stream unless told" do
      s = build
      assert_equal ["http1", 1], [s.protocol, s.streams]
      refute s.h2c?
      assert build(protocol: "h2c", streams: 10).h2c?
    end

    it "names a bad protocol or stream count, and what h2c cannot be combined with" do
      {
        { protocol: "h3" } => /invalid protocol "h3" \(expected http1, h2c or h2\)/,
        { protocol: "h2c", streams: 0 } => /invalid streams 0/,
        { protocol: "h2c", streams: 10_001 } => /invalid streams 10001/,
        { streams: 4 } => /streams 4 needs protocol h2c/,
        { protocol: "h2c", keepalive: false } => /keepalive false cannot be combined with protocol h2c/,
        { protocol: "h2c", cookies: true } => /cookies are not supported with protocol h2c/,
        { protocol: "h2c", cookie_presets: ["a=b"] } => /cookies are not supported with protocol h2c/
      }.each do |options, pattern|
        error = assert_raises(Rackbench::UsageError, options.inspect) { build(**options) }
        assert_match pattern, error.message
      end
    end
  end

  describe Rackbench::LoadEngine do
    let(:engine) { Rackbench::LoadEngine.new(binary: "/bin/engine") }

    it "passes --protocol and --streams for h2c, and neither for http1" do
      argv = engine.argv(build(protocol: "h2c", streams: 10))
      assert_equal ["--protocol", "h2c", "--streams", "10", "http://127.0.0.1:1/"], argv.last(5)
      plain = engine.argv(build)
      refute_includes plain, "--protocol"
      refute_includes plain, "--streams"
    end
  end

  describe Rackbench::LoadResult do
    it "reads the protocol, body bytes, MB/s and the h2 counts" do
      r = Rackbench::LoadResult.new(h2_result(resets: { "REFUSED_STREAM" => 2 }))
      assert_equal "h2c", r.protocol
      assert_equal 3_355_443_200, r.body_bytes
      assert_equal 1677.722, r.mb_per_s
      assert_equal({ "REFUSED_STREAM" => 2 }, r.h2["resets"])
      assert_nil r.not_h2c_reason
    end

    it "is http1 without h2 for results from engines before HTTP/2" do
      r = Rackbench::LoadResult.new(JSON.parse(JSON.generate(Fakes::ENGINE_RESULT)))
      assert_equal "http1", r.protocol
      assert_nil r.h2
      assert_nil r.mb_per_s
      assert_nil r.not_h2c_reason
    end

    it "gives the reason when a connection found no HTTP/2" do
      r = Rackbench::LoadResult.new(h2_result(not_h2c_connections: 3, reason: 'it answered "HTTP/1.1 400 Bad Request"'))
      assert_equal 'it answered "HTTP/1.1 400 Bad Request"', r.not_h2c_reason
    end

    it "refuses an h2 object of the wrong shape" do
      doc = h2_result
      doc["h2"]["resets"] = 3
      error = assert_raises(Rackbench::EngineError) { Rackbench::LoadResult.new(doc) }
      assert_match(/h2\.resets is 3, expected Hash/, error.message)
      doc["h2"] = []
      assert_raises(Rackbench::EngineError) { Rackbench::LoadResult.new(doc) }
    end
  end

  describe Rackbench::LoadSummary do
    it "names the protocol and streams, body MB/s, resets and GOAWAYs; http1 unchanged" do
      text = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(
                                          h2_result(resets: { "INTERNAL_ERROR" => 3 }, goaway_codes: { "NO_ERROR" => 1 })
                                        )).to_s
      assert_match(/keep-alive, h2c, 4 streams per connection$/, text)
      assert_match(/bodies 1677\.7 MB\/s/, text)
      assert_match(/Resets:      INTERNAL_ERROR 3 \(RST_STREAM from the server\)/, text)
      assert_match(/GOAWAY:      NO_ERROR 1/, text)
      refute_match(/Not HTTP\/2/, text)
      bad = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(h2_result(not_h2c_connections: 1,
                                                                            reason: "it sent \"<html>\""))).to_s
      assert_match(/Not HTTP\/2:  the server did not speak HTTP\/2 \(h2c prior knowledge\): it sent "<html>"/, bad)
      plain = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(JSON.parse(JSON.generate(Fakes::ENGINE_RESULT)))).to_s
      refute_match(/h2c|streams|bodies|Resets|GOAWAY/, plain)
    end
  end

  describe "experiment keys" do
    def parse(load)
      Rackbench::Experiment.parse(<<~YAML, source: "h2.yml", base_dir: dir)
        name: h2
        rubies: [ruby]
        servers: [falcon]
        apps: [download]
        load: #{load}
      YAML
    end

    it "makes load.protocol a dimension like any load key" do
      exp = parse("{ protocol: [http1, h2c], streams: 1, duration: 1s }")
      assert_equal %w[http1 h2c], exp.configurations.map { |c| c.load[:protocol] }
      assert_equal %w[http1 h2c], exp.configurations.map { |c| c.dims["load.protocol"] }
      assert_equal [1, 1], exp.configurations.map { |c| c.load[:streams] }
    end

    it "defaults to http1 with one stream, out of the dimensions" do
      exp = parse("{ duration: 1s }")
      assert_equal [["http1", 1]], exp.configurations.map { |c| c.load.values_at(:protocol, :streams) }
      refute exp.configurations.first.dims.key?("load.protocol")
    end

    it "refuses an unknown protocol, streams without h2c, and h2c without keep-alive or with cookies" do
      {
        "{ protocol: h3 }" => /load.protocol.*unknown protocol "h3".*known: http1, h2c/,
        "{ protocol: h2c, streams: 0 }" => /load.streams/,
        "{ streams: 8 }" => /load.streams: 8 streams need load.protocol h2c/,
        "{ protocol: h2c, keepalive: false }" => /load.keepalive: false cannot be combined with load.protocol h2c/,
        "{ protocol: h2c, cookies: true }" => /load.cookies: the cookie jar is not supported with load.protocol h2c/
      }.each do |load, pattern|
        error = assert_raises(Rackbench::ConfigError, load) { parse(load) }
        assert_match pattern, error.message
      end
    end

    it "refuses streams > 1 in a matrix that also has http1" do
      error = assert_raises(Rackbench::ConfigError) { parse("{ protocol: [http1, h2c], streams: 8 }") }
      assert_match(/8 streams need load.protocol h2c/, error.message)
    end
  end

  describe "servers" do
    it "falcon serves h2c; the others are refused with a reason" do
      falcon = Rackbench::Servers.fetch("falcon")
      assert_includes falcon.protocols, "h2c"
      assert_nil falcon.protocol_reason("h2c")
      assert_nil falcon.protocol_reason("http1")
      puma = Rackbench::Servers.fetch("puma")
      assert_nil puma.protocol_reason("http1")
      assert_equal "puma does not serve h2c (it serves http1); load.protocol h2c needs a server that does, e.g. falcon",
                   puma.protocol_reason("h2c")
    end
  end

  describe "trials" do
    let(:install) { Fakes.install(jit: []) }

    def runner(text, engine)
      exp = Rackbench::Experiment.parse(text, source: "h2.yml", base_dir: dir)
      Rackbench::Runner.new(source: exp, results_dir: dir, out: StringIO.new, err: StringIO.new, installs: [install],
                            layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                            environment: {}, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                            collaborators: { engine: engine, launcher: Fakes::Launcher.new, bundles: Fakes::Bundles.new,
                                             companions: Fakes.companions },
                            watchdog: Fakes::Watchdog.new)
    end

    let(:text) do
      <<~YAML
        name: h2
        rubies: [ruby]
        servers: [puma, falcon]
        apps: [rack-hello]
        load: { protocol: [http1, h2c], streams: 1, duration: 0.1s, warmup: 0s, connections: 2, timeout: 2s }
      YAML
    end

    it "leaves h2c on a server without it out of the plan, with the reason, and runs the rest" do
      engine = Fakes::Engine.new
      run = runner(text, engine)
      assert_equal ["puma does not serve h2c (it serves http1); load.protocol h2c needs a server that does, e.g. falcon"],
                   run.plan.skipped.map(&:reason)
      assert_equal 3, run.plan.trials.size
      run.run
      assert_equal [%w[falcon h2c]], engine.settings.select(&:h2c?).map { |s| ["falcon", s.protocol] }
      assert_equal 2, engine.settings.count { |s| s.protocol == "http1" }
    end

    it "runs a request list over h2c without a cookie jar, and over http1 with one" do
      File.write(File.join(dir, "plain.requests"), "--- name=home\nGET /\n")
      engine = Fakes::Engine.new
      runner(text.sub("servers: [puma, falcon]", "servers: [falcon]")
                 .sub("streams: 1,", "streams: 1, requests: plain.requests,"), engine).run
      assert_equal({ "http1" => [true], "h2c" => [false] },
                   engine.settings.group_by(&:protocol).transform_values { |s| s.map(&:cookies) })
    end

    it "fails a trial whose server did not speak HTTP/2, with the reason, and passes one that did" do
      reason = 'it sent "<!DOCTYPE HTML>" instead of a SETTINGS frame'
      bad = runner(text.sub("servers: [puma, falcon]", "servers: [falcon]"),
                   Fakes::Engine.new(result: h2_result(not_h2c_connections: 2, reason: reason)))
      bad.run
      # The fake engine answers both trials alike: each fails with the reason.
      trials = Rackbench::Store.open(dir, &:trials)
      assert_equal 2, trials.size
      assert(trials.all? { |t| !t.ok? && t.reason == "server did not speak HTTP/2 (h2c prior knowledge): #{reason}" },
             trials.map(&:reason).inspect)
      ok = runner(text.sub("servers: [puma, falcon]", "servers: [falcon]").sub("name: h2", "name: h2-ok"),
                  Fakes::Engine.new(result: h2_result))
      FileUtils.rm_rf(Dir.glob(File.join(dir, "*.db*")))
      ok.run
      assert(Rackbench::Store.open(dir, &:trials).all?(&:ok?))
    end

    it "names the reset codes when resets fail a trial" do
      doc = h2_result(resets: { "INTERNAL_ERROR" => 40 })
      doc["errors"]["stream_reset"] = 40
      run = runner(text.sub("servers: [puma, falcon]", "servers: [falcon]"), Fakes::Engine.new(result: doc))
      run.run
      reasons = Rackbench::Store.open(dir, &:trials).map(&:reason)
      assert(reasons.all? { |r| r.include?('"stream_reset"=>40') && r.include?('"reset codes"=>{"INTERNAL_ERROR"=>40}') },
             reasons.inspect)
    end
  end
end
