# frozen_string_literal: true

require "socket"

# Debian's nginx as a test's or a bench's server (one worker, in the
# foreground, in a process group of its own): the config around the
# caller's http-block body, every path in one directory, ready when its
# ports accept. test/integration/load_engine_tls_test.rb and
# bench/tls_vs_peers.rb use it.
module NginxServer
  module_function

  # The whole nginx.conf: +http_body+ (servers, formats) inside an http
  # block that logs nothing unless a server says so and keeps
  # connections alive for as long as a run lasts.
  def config(dir, http_body)
    <<~CONF
      daemon off;
      worker_processes 1;
      pid #{dir}/nginx.pid;
      error_log #{dir}/error.log warn;
      events { worker_connections 4096; }
      http {
        access_log off;
        client_body_temp_path #{dir}/body;
        proxy_temp_path #{dir}/proxy;
        fastcgi_temp_path #{dir}/fastcgi;
        uwsgi_temp_path #{dir}/uwsgi;
        scgi_temp_path #{dir}/scgi;
        # nginx closes a kept-alive connection after 1000 requests by
        # default, which would turn a keep-alive run into a reconnect one.
        keepalive_requests 100000000;
        keepalive_timeout 120s;
      #{http_body.gsub(/^/, "  ")}}
    CONF
  end

  # Starts nginx with config(dir, http_body), pinned to +cpu+ when given;
  # returns its pid once every port in +ports+ accepts (raises after 10 s).
  def start(dir, http_body, ports:, cpu: nil)
    raise "nginx not found: install the Debian package nginx (bin/setup --all does)" unless system("command -v nginx >/dev/null 2>&1")

    file = File.join(dir, "nginx.conf")
    File.write(file, config(dir, http_body))
    argv = ["nginx", "-c", file, "-e", File.join(dir, "error.log")]
    argv = ["taskset", "-c", cpu.to_s, *argv] if cpu
    pid = Process.spawn(*argv, out: File::NULL, err: File::NULL, pgroup: true)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
    ports.each do |port|
      begin
        TCPSocket.new("127.0.0.1", port).close
      rescue SystemCallError
        raise "nginx did not listen on #{port}: #{File.read(File.join(dir, "error.log")) rescue ""}" if
          Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

        sleep 0.05
        retry
      end
    end
    pid
  end

  # TERM to its process group, then reaps it.
  def stop(pid)
    Process.kill(:TERM, -pid)
    Process.wait(pid)
  rescue SystemCallError
    nil
  end
end
