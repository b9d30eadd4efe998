# frozen_string_literal: true

module Rackbench
  # A process rackbench starts beside a trial's server (a proxy in front of
  # it, a service behind it): one launch for all of them. Its command line
  # (the guard that ties it to the runner's life and the CPU pinning come
  # first in argv) is written at the top of its log; it starts in a
  # process group of its own (ServerProcess: the servers' stop path, TERM,
  # grace, KILL of the whole group) with nothing of the runner's shell but
  # PATH (varnishd runs the C compiler on its VCL; initdb finds its tools)
  # and the run's marker (the watchdog's sweep finds it); and the caller's
  # block proves it ready. A block that raises, or an interrupt, stops it
  # before the error goes on: nothing is left running.
  #
  #   process, running = Sidecar.start(argv: argv, chdir: dir, log_path: log, port: port,
  #                                    marker_env: marker, stop_grace_s: 2) do |process|
  #     process.wait_ready(health_path: "/", timeout_s: 10)
  #     Running.new(process)
  #   end
  module Sidecar
    # What samples a sidecar's process tree over a trial's window: a
    # Sampler of it (a test gives its own).
    SAMPLER = ->(process) { Sampler.new(process.pid, pgid: process.pgid) }

    module_function

    # Returns [the ServerProcess, the block's value].
    #
    # :port :: the TCP port it listens on, or nil (a unix socket)
    # :marker_env :: the run's marker (Watchdog)
    def start(argv:, chdir:, log_path:, port:, marker_env:, stop_grace_s:)
      File.write(log_path, "# #{argv.join(" ")}\n", mode: "a")
      process = ServerProcess.new(argv: argv, env: env(marker_env), clean_env: true, chdir: chdir, log_path: log_path,
                                  port: port)
      begin
        process.start
        [process, yield(process)]
      rescue StandardError, Interrupt
        process.stop(grace_s: stop_grace_s)
        raise
      end
    end

    # Nothing of the runner's shell but PATH, and the run's marker.
    def env(marker_env)
      { "PATH" => ENV.fetch("PATH", "/usr/bin:/bin"), **marker_env }
    end
  end
end
