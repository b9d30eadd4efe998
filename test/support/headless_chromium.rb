# frozen_string_literal: true

require "cgi"
require "json"
require "tmpdir"

# Headless Chromium for the site's browser test: a page opened from disk
# with the network cut off (every proxied request to a closed port, every
# name unresolvable), its scripts and timers run to completion in virtual
# time, then its DOM dumped or a screenshot taken. Each run has a fresh
# profile, is bounded in time, and its whole process group is stopped
# (TERM, then KILL) before it returns: no helper outlives it.
# RACKBENCH_CHROMIUM names the browser (default: chromium on PATH);
# RACKBENCH_CHROMIUM_TIMEOUT_S bounds each run (default 90).
module HeadlessChromium
  FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
    "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>", "--host-resolver-rules=MAP * ~NOTFOUND",
    "--enable-logging=stderr", "--v=0", "--hide-scrollbars", "--virtual-time-budget=30000"
  ].freeze

  # Raised when the browser cannot be run or does not finish in time.
  class Failure < StandardError; end

  module_function

  def timeout_s = Float(ENV.fetch("RACKBENCH_CHROMIUM_TIMEOUT_S", "90"))

  # The browser's path, or nil when none is installed.
  def binary
    ENV["RACKBENCH_CHROMIUM"] || %w[chromium chromium-browser].find do |name|
      ENV.fetch("PATH", "").split(File::PATH_SEPARATOR).any? { |dir| File.executable?(File.join(dir, name)) }
    end
  end

  # [render status (the page's <body data-render-status>, parsed), DOM,
  # the browser's stderr] of the page at +path+ (+fragment+: "#a=1&b=2").
  def open(path, fragment: "")
    dom, stderr = run("--dump-dom", "file://#{path}#{fragment}")
    raw = dom[/<body[^>]*\sdata-render-status="([^"]*)"/, 1]
    raise Failure, "#{path} never reported its render status; chromium said: #{stderr.lines.last(8).join}" unless raw

    [JSON.parse(CGI.unescapeHTML(raw)), dom, stderr]
  end

  # Writes a PNG of the page at +path+ to +png+, +width+ x +height+ pixels.
  def screenshot(path, png, width: 1300, height: 1600, fragment: "")
    FileUtils.rm_f(png)
    run("--window-size=#{width},#{height}", "--screenshot=#{png}", "file://#{path}#{fragment}")
    raise Failure, "chromium wrote no screenshot at #{png}" unless File.file?(png)

    png
  end

  def run(*args)
    Dir.mktmpdir("rackbench-chromium") do |dir|
      out = File.join(dir, "stdout")
      err = File.join(dir, "stderr")
      pid = Process.spawn(binary, *FLAGS, "--user-data-dir=#{dir}/profile", *args, out: out, err: err, in: File::NULL,
                                                                                pgroup: true)
      waiter = Process.detach(pid)
      finished = waiter.join(timeout_s)
      stop(pid, waiter)
      raise Failure, "chromium did not finish within #{timeout_s} s: #{File.read(err).lines.last(5).join}" unless finished

      [File.read(out, encoding: "UTF-8"), File.read(err, encoding: "UTF-8")]
    end
  end

  # TERM, then KILL, the browser's whole group (its helpers share it).
  def stop(pgid, waiter)
    %w[TERM KILL].each do |signal|
      return unless alive?(pgid)

      Process.kill(signal, -pgid)
      waiter.join(5)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
      sleep 0.05 while alive?(pgid) && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    end
  rescue Errno::ESRCH
    nil
  end

  def alive?(pgid)
    Process.kill(0, -pgid)
    true
  rescue Errno::ESRCH
    false
  end
end
