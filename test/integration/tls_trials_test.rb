# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "support/test_rubies"

# load.tls through `rackbench run` with real servers: rack-hello on Puma
# (ssl_bind), Falcon (https://, over HTTP/1.1 and h2 by ALPN), WEBrick
# (webrick/https) and Thin (--ssl, EventMachine's TLS: on 3.1 only, whose
# eventmachine is built already), on the system's 3.1 and on 3.4.5 built
# from source (test/support/test_rubies.rb: its servers, and Falcon's
# localhost gem, are other versions), beside a plain Puma trial, each
# booted, identity-checked, TLS-checked, measured and stored like any other
# trial. h2 on the servers that serve HTTP/1.1 only is left out of the plan
# with its reason. One run for the file; windows are short: these
# check what ran and what was stored, never speed.
# The experiment, kept out of the top level (the integration lanes load
# several files into one process).
module TlsTrialsTestFixtures
  extend Rackbench::TestHelpers, Rackbench::Test::Cli

  def self.experiment = <<~YAML
    name: tls-trials
    seed: 5
    batches: 1
    rubies:
      - ruby
      - { name: r34, build: { source: #{TestRubies.tarball("3.4")} } }
    servers: [puma, falcon, webrick, thin]
    apps: [rack-hello]
    processes: 1
    threads: 2 # WEBrick serves one kept-alive connection per thread: two, for the two connections
    load:
      tls: [false, true]
      protocol: [http1, h2]
      connections: 2
      duration: 1s
      warmup: 0.5s
      timeout: 5s
    exclude:
      - { load.tls: false, load.protocol: h2 }
      - { load.tls: false, server: [falcon, webrick, thin] }
      - { server: thin, ruby: r34 }
      - { load.tls: false, ruby: r34 }
  YAML
end

describe "load.tls trials (integration)" do
  before { require_engine! }

  # The run, once for the file: [stdout, stderr, status, results dir].
  def self.experiment_run
    @run ||= begin
      dir = Dir.mktmpdir("rackbench-tls-trials")
      Minitest.after_run { FileUtils.rm_rf(dir) }
      file = File.join(dir, "tls.yml")
      File.write(file, TlsTrialsTestFixtures.experiment)
      results = File.join(dir, "results")
      out, err, status = rackbench("run", file, "--results", results)
      [out, err, status, results]
    end
  end

  def results
    out, err, status, dir = self.class.experiment_run
    assert status.success?, "run failed: #{err}\n#{out}"
    dir
  end

  def trials = Rackbench::Store.open(results, &:trials)

  def trial(server, tls, protocol = "http1", ruby: "ruby")
    trials.find do |t|
      t.ruby == ruby && t.server == server && t.result &&
        t.result["settings"]["url"].start_with?(tls ? "https" : "http:") && t.result["settings"]["protocol"] == protocol
    end
  end

  it "runs four servers over TLS on 3.1 and 3.4, proves each served the run's certificate, and leaves h2 out where not served" do
    assert_equal 10, trials.size
    assert trials.all?(&:ok?), trials.map { |t| [t.key, t.reason] }.inspect
    out = self.class.experiment_run.first
    %w[puma webrick thin].each { |server| assert_match(/#{server} does not serve h2 over TLS \(it serves http1 over TLS\)/, out) }

    fingerprint = Rackbench::Tls.certificate(File.join(results, "tls")).fingerprint
    expected = { ["puma", "http1"] => nil, ["falcon", "http1"] => "http/1.1", ["falcon", "h2"] => "h2",
                 ["webrick", "http1"] => nil, ["thin", "http1"] => nil }
    expected.to_a.product(%w[ruby r34]).each do |((server, protocol), alpn), ruby|
      next if server == "thin" && ruby == "r34"

      t = trial(server, true, protocol, ruby: ruby)
      refute_nil t, "#{server} #{protocol} over TLS on #{ruby}"
      assert_equal(ruby == "r34" ? "3.4.5" : RUBY_VERSION, t.identity["description"][/\Aruby ([\d.]+)/, 1])
      identity = t.identity
      assert_equal [], identity["mismatches"], "#{server}: what ran is what was named"
      assert_equal server, identity.dig("server_gem", "name")
      assert_equal fingerprint, identity.dig("tls", "certificate_sha256"), "#{server} served the run's certificate"
      assert_equal "TLSv1.3", identity.dig("tls", "version")
      # Puma's MiniSSL, WEBrick and Thin answer no ALPN; Falcon chooses
      # what was offered.
      assert_equal [alpn], [identity.dig("tls", "alpn")], "#{server} #{protocol}: ALPN"

      result = t.result
      assert_match %r{\Ahttps://127\.0\.0\.1:\d+/\z}, result["settings"]["url"]
      assert_equal File.join(results, "tls", "ca.pem"), result.dig("settings", "tls", "ca_file")
      assert result.dig("settings", "tls", "verify"), "the engine checked the certificate"
      tls = result["tls"]
      assert_equal protocol, result["settings"]["protocol"]
      assert_equal [alpn], [tls["alpn"]]
      assert_operator tls["handshakes"] + tls["warmup"]["handshakes"], :>=, 2, "a handshake per connection at least"
      assert_equal 0, tls["failures"].values.sum + tls["warmup"]["failures"].values.sum
      assert_operator result["requests"], :>, 0
    end

    plain = trial("puma", false)
    assert_nil plain.result["tls"]
    assert_nil plain.identity["tls"]
  end

  it "reports the handshake cost and the share of responses that paid one for the TLS configurations only" do
    json, err, status = rackbench("report", "--results", results, "--json")
    assert status.success?, err
    configs = JSON.parse(json)["configs"]
    tls, plain = configs.partition { |c| c["dims"]["load.tls"] }
    assert_equal 9, tls.size
    tls.each do |c|
      assert_operator c["tls_handshake_us"], :>, 0, c["label"]
      assert_operator c["tls_handshake_share"], :>=, 0, c["label"]
    end
    assert_equal [[nil, nil]], plain.map { |c| c.values_at("tls_handshake_us", "tls_handshake_share") }
    terminal, = rackbench("report", "--results", results)
    assert_match(/TLS hs/, terminal)
  end
end
