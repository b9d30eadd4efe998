# frozen_string_literal: true

require "test_helper"

# The generated proxy configurations: the upstream is the trial's server
# and nothing else, keep-alive to it, the cache keyed on the cookie and
# present only in the cached topologies; the argv runs in the foreground
# with everything in the trial's directory; a missing program is named.
describe "proxy configurations" do
  let(:dir) { Dir.mktmpdir("rackbench-proxy-config") }
  after { FileUtils.rm_rf(dir) }

  def nginx_text(cache:)
    Rackbench::Proxy::NginxConfig.text(dir: dir, listen_port: 4100, upstream_port: 4200, workers: 3, keepalive: 32,
                                       cache: cache, marker: "RACKBENCH_RESULTS_DIR")
  end

  it "forwards nginx to the trial's server only, over kept-alive HTTP/1.1, in the foreground" do
    text = nginx_text(cache: false)
    assert_equal ["127.0.0.1:4200"], text.scan(/^\s*server (\S+);/).flatten, "one upstream server: the trial's"
    assert_equal ["http://app"], text.scan(/proxy_pass (\S+);/).flatten
    assert_match(/listen 127\.0\.0\.1:4100;/, text)
    assert_match(/keepalive 32;/, text)
    assert_match(/proxy_http_version 1\.1;/, text)
    assert_match(/proxy_set_header Connection "";/, text)
    assert_match(/^daemon off;$/, text)
    assert_match(/^master_process on;$/, text)
    assert_match(/^worker_processes 3;$/, text)
    assert_match(/^env RACKBENCH_RESULTS_DIR;$/, text)
    assert_match(%r{error_log #{dir}/error\.log}, text)
    text.scan(%r{(?:path|pid|log) (/\S+)}).flatten.each { |path| assert path.start_with?(dir), path }
  end

  it "caches in nginx-cache only, keyed on the cookie, overriding Rails' private pages" do
    plain = nginx_text(cache: false)
    cached = nginx_text(cache: true)
    refute_match(/proxy_cache/, plain)
    refute_match(/access_log #{dir}/, plain)
    key = cached[/proxy_cache_key "([^"]+)";/, 1]
    assert_includes key, "$http_cookie"
    assert_includes key, "$request_uri"
    assert_match(/proxy_ignore_headers Cache-Control Expires Set-Cookie;/, cached)
    assert_match(%r{proxy_cache_path #{dir}/cache }, cached)
    assert_match(%r{access_log #{dir}/access\.log cache;}, cached)
    assert_match(/log_format cache '\$upstream_cache_status \$status';/, cached)
  end

  it "has varnish's VCL name the trial's server as its only backend and hash the cookie" do
    vcl = Rackbench::Proxy::VarnishConfig.text(upstream_port: 4200)
    assert_equal 1, vcl.scan(/^backend /).size
    assert_match(/\.host = "127\.0\.0\.1";\s+\.port = "4200";/, vcl)
    assert_match(/hash_data\(req\.http\.Cookie\);/, vcl)
    assert_match(/set beresp\.ttl = 10s;/, vcl)
    assert_match(/if \(req\.method != "GET" && req\.method != "HEAD"\) \{\s+return \(pass\);/, vcl)
  end

  it "refuses an upstream port that is not a number (no text reaches the configuration)" do
    assert_raises(ArgumentError) { Rackbench::Proxy::VarnishConfig.text(upstream_port: "4200; backend evil") }
    assert_raises(ArgumentError) do
      Rackbench::Proxy::NginxConfig.text(dir: dir, listen_port: 1, upstream_port: "1; server 10.0.0.1:80",
                                         workers: 1, keepalive: 1, cache: false, marker: "M")
    end
  end

  it "writes the configuration into the proxy's directory and runs each program in the foreground" do
    fake_bin = File.join(dir, "nginx-bin")
    File.write(fake_bin, "#!/bin/sh\n")
    File.chmod(0o755, fake_bin)
    argv = Rackbench::Proxy::Nginx.new(cache: true, binary: fake_bin)
                                  .prepare(dir: dir, listen_port: 1, upstream_port: 2, workers: 1, keepalive: 16,
                                           marker: "M")
    assert_equal [fake_bin, "-p", "#{dir}/", "-e", "#{dir}/error.log", "-c", "#{dir}/nginx.conf"], argv
    assert_match(/proxy_cache rackbench;/, File.read("#{dir}/nginx.conf"))

    argv = Rackbench::Proxy::Varnish.new(binary: fake_bin).prepare(dir: dir, listen_port: 1, upstream_port: 2)
    assert_equal [fake_bin, "-F", "-j", "none", "-T", "none", "-n", "#{dir}/varnish", "-a", "127.0.0.1:1",
                  "-f", "#{dir}/default.vcl", "-s", "malloc,64m"], argv
    assert_match(/\.port = "2";/, File.read("#{dir}/default.vcl"))
  end

  it "names a missing program, and finds one on PATH or in /usr/sbin" do
    absent = File.join(dir, "absent")
    assert_equal "proxy nginx-cache needs nginx, which is not installed (Debian: apt-get install nginx; " \
                 "bin/setup --all installs it)", Rackbench::Proxy::Nginx.new(cache: true, binary: absent).unsupported_reason
    assert_match(/\Aproxy varnish needs #{absent}, not installed/, Rackbench::Proxy::Varnish.new(binary: absent).unsupported_reason)
    assert_nil Rackbench::Proxy::Binary.find(absent)
    assert_nil Rackbench::Proxy::Binary.find("rackbench-no-such-program", path: dir)
    assert_equal "/bin/sh", Rackbench::Proxy::Binary.find("sh", path: "/bin")
    assert_nil Rackbench::Proxy.unsupported_reason("none")
    assert_raises(Rackbench::ConfigError) { Rackbench::Proxy.fetch("squid") }
  end
end
