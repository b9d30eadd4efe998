# frozen_string_literal: true

require "test_helper"
require "json"
require_relative "../support/report_store"

# https:// on the Ruby side of the load engine: the settings that name it,
# the engine's argv, the result's "tls" object (read, checked, and its
# figures), and `rackbench load`'s summary. The engine's TLS itself is
# tested in test/c/test_tls.c, test/c/fuzz_tls.c and
# test/integration/load_engine_tls_test.rb.
describe "https:// in the load settings and result" do
  def build(url: "https://127.0.0.1:1/", **options)
    Rackbench::LoadSettings.build(url: url, **options)
  end

  # The result of a real run against nginx (--no-keepalive: every
  # reconnect resumed its session).
  let(:doc) { JSON.parse(File.read(File.expand_path("../fixtures/engine_result_tls.json", __dir__))) }

  describe Rackbench::LoadSettings do
    it "takes https:// URLs: the certificate checked and sessions resumed unless told" do
      s = build
      assert s.tls?
      assert_equal [nil, false, true], [s.ca_file, s.insecure, s.tls_resume]
      refute build(url: "http://127.0.0.1:1/").tls?
      assert build(protocol: "h2", streams: 4).h2c?, "h2 is HTTP/2: its streams share a connection"
    end

    it "names what does not go together" do
      {
        { url: "http://127.0.0.1:1/", protocol: "h2" } => /protocol h2 is HTTP\/2 over TLS: it needs an https:\/\/ URL/,
        { protocol: "h2c" } => /protocol h2c is HTTP\/2 over cleartext: use protocol h2/,
        { protocol: "h2", keepalive: false } => /keepalive false cannot be combined with protocol h2/,
        { url: "http://127.0.0.1:1/", insecure: true } => /apply to https:\/\/ URLs only/,
        { url: "http://127.0.0.1:1/", ca_file: "ca.pem" } => /apply to https:\/\/ URLs only/,
        { url: "http://127.0.0.1:1/", tls_resume: false } => /apply to https:\/\/ URLs only/,
        { ca_file: "ca.pem", insecure: true } => /contradict each other/,
        { ca_file: "" } => /invalid ca_file/,
        { insecure: "yes" } => /invalid insecure/,
        { url: "ftp://127.0.0.1/" } => /expected an http:\/\/ or https:\/\/ URL/
      }.each do |options, pattern|
        error = assert_raises(Rackbench::UsageError) { build(**options) }
        assert_match pattern, error.message
      end
    end
  end

  describe Rackbench::LoadEngine do
    it "passes --cacert, --insecure, --no-tls-resume and --protocol h2 only when asked" do
      engine = Rackbench::LoadEngine.new(binary: "engine")
      argv = engine.argv(build(protocol: "h2", streams: 2, ca_file: "/tmp/ca.pem", tls_resume: false))
      assert_equal ["--protocol", "h2", "--streams", "2", "--cacert", "/tmp/ca.pem", "--no-tls-resume",
                    "https://127.0.0.1:1/"], argv.last(8)
      assert_equal ["--insecure", "https://127.0.0.1:1/"], engine.argv(build(insecure: true)).last(2)
      plain = engine.argv(build)
      %w[--cacert --insecure --no-tls-resume --protocol].each { |flag| refute_includes plain, flag }
    end
  end

  describe Rackbench::LoadResult do
    it "reads the tls object of a real run" do
      r = Rackbench::LoadResult.new(doc)
      assert_equal "TLSv1.3", r.tls["version"]
      assert_equal r.requests, r.tls["handshakes"], "--no-keepalive: a handshake per request"
      assert_equal r.tls["handshakes"], r.tls["resumed"], "every reconnect resumed its session"
      assert_equal 1.0, r.tls["handshake_response_fraction"]
      assert_nil r.tls_reason
      assert_equal 0, r.errors["tls"]
      assert_includes Rackbench::LoadResult::ERROR_KINDS, "tls"
    end

    it "gives the first failure's reason, and refuses a malformed tls object" do
      doc["tls"]["failures"]["verify"] = 3
      doc["tls"]["reason"] = "the server's certificate did not check out: self-signed certificate"
      assert_equal doc["tls"]["reason"], Rackbench::LoadResult.new(doc).tls_reason
      {
        ->(d) { d["tls"] = [] } => /tls is \[\], expected an object or null/,
        ->(d) { d["tls"]["handshakes"] = "4" } => /tls\.handshakes is "4", expected Integer/,
        ->(d) { d["tls"]["failures"].delete("alpn") } => /tls\.failures lacks alpn/,
        ->(d) { d["tls"]["full_handshake_us"].delete("p99") } => /tls\.full_handshake_us lacks p99/,
        ->(d) { d["tls"]["warmup"]["resumed"] = nil } => /tls\.warmup\.resumed is nil/
      }.each do |mutate, pattern|
        broken = JSON.parse(JSON.generate(doc))
        mutate.call(broken)
        error = assert_raises(Rackbench::EngineError) { Rackbench::LoadResult.new(broken) }
        assert_match pattern, error.message
      end
      plain = JSON.parse(JSON.generate(doc)).merge("tls" => nil)
      assert_nil Rackbench::LoadResult.new(plain).tls
    end
  end

  describe Rackbench::LoadResult::TlsFigures do
    let(:figures) { Rackbench::LoadResult::TlsFigures }

    it "pools the warmup's and the window's handshakes, each kind apart" do
      tls = ReportStore.tls_document
      # 4 full handshakes of 2 ms (all in the warmup), 100 resumed of 0.5 ms (window)
      assert_in_delta 2000.0, figures.full_handshake_us(tls)
      assert_in_delta 500.0, figures.resumed_handshake_us(tls)
      assert_in_delta 0.1, figures.handshake_share(tls)
      tls["warmup"]["resumed"] = 2 # 2 full at 2 ms and 2 resumed at 0 ms in the warmup
      assert_in_delta 2000.0, figures.full_handshake_us(tls)
      assert_in_delta 100 * 500.0 / 102, figures.resumed_handshake_us(tls)
    end

    it "is nil without TLS or without a handshake of the kind" do
      assert_nil figures.full_handshake_us(nil)
      assert_nil figures.handshake_share(nil)
      tls = ReportStore.tls_document
      tls["resumed"] = 0
      tls["warmup"]["resumed"] = 0
      tls["handshakes"] = 0
      assert_nil figures.resumed_handshake_us(tls)
    end
  end

  describe Rackbench::LoadSummary do
    it "says what the handshakes negotiated and cost, and the share of responses that paid one" do
      text = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(doc)).to_s
      assert_match(/^  TLS:         TLSv1\.3, TLS_AES_\w+, ALPN http\/1\.1$/, text)
      assert_match(/^  Handshakes:  \d+ in the window \(\d+ resumed\), \d+ in the warmup; mean full [\d.]+\w+, resumed [\d.]+\w+; 100\.00% of the responses paid one$/,
                   text)
      refute_match(/TLS failed/, text)
    end

    it "names a failure with what to do about a certificate" do
      doc["tls"]["failures"]["verify"] = 3
      doc["tls"]["reason"] = "the server's certificate did not check out: self-signed certificate"
      text = Rackbench::LoadSummary.new(Rackbench::LoadResult.new(doc)).to_s
      assert_match(/TLS failed:  the server's certificate did not check out: self-signed certificate \(--cacert FILE trusts a certificate, --insecure checks none\)/,
                   text)
      plain = JSON.parse(JSON.generate(doc)).merge("tls" => nil)
      refute_match(/TLS|Handshakes/, Rackbench::LoadSummary.new(Rackbench::LoadResult.new(plain)).to_s)
    end
  end
end
