# frozen_string_literal: true

require "test_helper"
require "json"
require_relative "../support/nginx_server"

# The engine over TLS against nginx (Debian's, one worker) serving
# rackbench's own certificate: nginx logs every request with its
# connection, its place on the connection and whether the connection's
# TLS session was resumed, the truth the engine's counts are held against.
# Beside it, servers that fail TLS in each way the result names. Runs are
# short: these tests check accounting and reasons, never speed.
describe "load engine over TLS" do
  before { require_engine! }

  # One nginx for the file: :logged (http/1.1 and h2, every request
  # logged), :h1_only (TLS without h2), :plain (no TLS at all).
  def self.nginx
    @nginx ||= begin
      dir = Dir.mktmpdir("rackbench-tls-nginx")
      cert = Rackbench::Tls.certificate(File.join(dir, "tls"))
      ports = %i[logged h1_only plain].to_h { |name| [name, Rackbench::Ports.free_port] }
      pid = NginxServer.start(dir, <<~HTTP, ports: ports.values)
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_certificate #{cert.cert_path};
        ssl_certificate_key #{cert.key_path};
        ssl_session_cache shared:TLS:1m;
        log_format truth '$connection $connection_requests $ssl_session_reused $server_protocol $uri';
        server {
          listen 127.0.0.1:#{ports[:logged]} ssl http2;
          access_log #{dir}/access.log truth;
          location / { return 200 "hello world\\n"; }
        }
        server {
          listen 127.0.0.1:#{ports[:h1_only]} ssl;
          location / { return 200 "hello world\\n"; }
        }
        server {
          listen 127.0.0.1:#{ports[:plain]};
          location / { return 200 "hello world\\n"; }
        }
      HTTP
      Minitest.after_run do
        NginxServer.stop(pid)
        FileUtils.rm_rf(dir)
      end
      { pid: pid, ports: ports, cert: cert, log: File.join(dir, "access.log") }
    end
  end

  def url(server, path, scheme: "https")
    "#{scheme}://127.0.0.1:#{self.class.nginx[:ports].fetch(server)}#{path}"
  end

  # nginx's lines for +path+ once its log holds +expected+ of them (it
  # writes as it goes; a slow write must not fail the test, an overcount
  # must): [connection, request number, resumed?, protocol] each.
  def logged(path, expected)
    log = self.class.nginx[:log]
    lines = -> { File.exist?(log) ? File.readlines(log).map(&:split).select { |f| f[4] == path } : [] }
    wait_until(timeout_s: 10, message: "nginx's log of #{path} reaching #{expected}") { lines.call.size >= expected }
    lines.call.map { |c, n, reused, protocol| [c, Integer(n), reused == "r", protocol] }
  end

  def run_load(url, **options)
    settings = Rackbench::LoadSettings.build(url: url, duration_s: 0.4, timeout_s: 5.0,
                                             ca_file: self.class.nginx[:cert].ca_path, **options)
    Rackbench::LoadEngine.new.run(settings)
  end

  # Every request the engine finished (window and warmup).
  def all_requests(result) = result.requests + result.warmup["requests"]

  it "counts exactly what nginx served over kept-alive connections: one handshake each, warmup apart" do
    result = run_load(url(:logged, "/kept"), connections: 2, warmup_s: 0.2)
    lines = logged("/kept", all_requests(result))
    assert_equal all_requests(result), lines.size, "every request nginx logged, no more"
    assert_equal 0, result.error_count, result.errors.inspect
    assert_equal 2, lines.map(&:first).uniq.size
    assert_equal [2, 2], [result.connections["connects"], result.connections["established"]]
    tls = result.tls
    assert_equal %w[TLSv1.3 http/1.1], tls.values_at("version", "alpn")
    assert_equal 2, tls["handshakes"] + tls["warmup"]["handshakes"], "one handshake per connection"
    assert_equal 2, tls["warmup"]["handshake_responses"], "the first request on each connection paid it"
    assert_equal [0, 0.0], tls.values_at("handshake_responses", "handshake_response_fraction")
    assert_operator tls["warmup"]["full_handshake_us"]["mean"], :>, 0
    assert_equal %w[HTTP/1.1], lines.map(&:last).uniq
  end

  it "makes a handshake per request without keep-alive, resumed on every reconnect as nginx saw it" do
    result = run_load(url(:logged, "/reconnect"), connections: 2, keepalive: false)
    lines = logged("/reconnect", all_requests(result))
    assert_equal all_requests(result), lines.size
    assert_equal [1], lines.map { |l| l[1] }.uniq, "a connection per request"
    tls = result.tls
    handshakes = tls["handshakes"] + tls["warmup"]["handshakes"]
    resumed = tls["resumed"] + tls["warmup"]["resumed"]
    assert_equal lines.size, handshakes
    assert_equal lines.count { |l| l[2] }, resumed, "the engine's resumptions are the ones nginx made"
    assert_operator resumed, :>=, handshakes - 2, "only each slot's first connection makes a full handshake"
    assert_equal [result.requests, 1.0], [tls["handshake_responses"], tls["handshake_response_fraction"]]
    assert_operator tls["resumed_handshake_us"]["mean"], :>, 0

    off = run_load(url(:logged, "/no-resume"), connections: 2, keepalive: false, tls_resume: false)
    off_lines = logged("/no-resume", all_requests(off))
    assert_equal 0, off_lines.count { |l| l[2] }, "--no-tls-resume: nginx resumed nothing"
    assert_equal 0, off.tls["resumed"] + off.tls["warmup"]["resumed"]
    assert_equal false, off.settings.dig("tls", "resume")
  end

  it "carries h2 streams over TLS, chosen by ALPN, counted exactly" do
    result = run_load(url(:logged, "/streams"), protocol: "h2", connections: 2, streams: 4, warmup_s: 0.1)
    lines = logged("/streams", all_requests(result))
    assert_equal all_requests(result), lines.size
    assert_equal 0, result.error_count, result.errors.inspect
    assert_equal %w[HTTP/2.0], lines.map(&:last).uniq
    assert_equal 2, lines.map(&:first).uniq.size, "two connections carried every stream"
    assert_equal %w[h2 h2], [result.protocol, result.tls["alpn"]]
    assert_equal 2, result.tls["handshakes"] + result.tls["warmup"]["handshakes"]
    assert_equal 8, result.tls["warmup"]["handshake_responses"], "the first streams on each connection waited for it"
  end

  it "names why TLS failed: a certificate it does not trust, a server without h2, a server without TLS" do
    untrusted = Rackbench::LoadEngine.new.run(
      Rackbench::LoadSettings.build(url: url(:logged, "/untrusted"), connections: 1, duration_s: 0.3)
    )
    assert_equal 0, untrusted.requests
    assert_operator untrusted.errors["tls"], :>, 0
    assert_equal untrusted.errors["tls"], untrusted.tls["failures"]["verify"]
    assert_match(/the server's certificate did not check out: (self-signed certificate in certificate chain|unable to get local issuer certificate)/,
                 untrusted.tls_reason)

    no_h2 = run_load(url(:h1_only, "/"), protocol: "h2", connections: 1, duration_s: 0.3)
    assert_equal 0, no_h2.requests
    assert_operator no_h2.errors["tls"], :>, 0
    assert_match(/no application protocol|chose no protocol by ALPN/, no_h2.tls_reason)

    plain = run_load(url(:plain, "/", scheme: "https"), connections: 1, duration_s: 0.3)
    assert_equal 0, plain.requests
    assert_equal plain.errors["tls"], plain.tls["failures"]["not_tls"]
    assert_match(/the server answered in something not TLS: "HTTP\/1.1 400 Bad Request"/, plain.tls_reason)
    # A wrong server costs a bounded number of attempts: 10 ms apart.
    assert_operator plain.connections["connect_attempts"], :<=, 0.3 / 0.010 + 5
  end
end
