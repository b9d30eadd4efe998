# frozen_string_literal: true

require_relative "../monotonic_clock"
require "fileutils"
require "net/http"

module Rackbench
  # One app-server process tree for one trial: start it without a shell in
  # a process group of its own, wait until it is ready, check that the app
  # answers correctly, and stop it leaving nothing behind.
  #
  #   server = ServerProcess.new(argv: [...], env: {...}, chdir: app_dir,
  #                              log_path: "logs/42.log", port: port)
  #   begin
  #     server.start
  #     server.wait_ready(health_path: "/", expected_processes: 3)
  #     server.check_app(path: "/", expect_status: 200, expect_body: "Hello")
  #     ... measure ...
  #   ensure
  #     server.stop
  #   end
  #
  # Stopping sends TERM to the process group and to every process of the
  # server's tree (workers may run in groups of their own), waits up to a
  # grace period, then sends KILL to whatever is left (see TreeStopper),
  # reaps the server and checks that its port is free again.
  class ServerProcess
    include MonotonicClock

    READY_TIMEOUT_S = 60
    STOP_GRACE_S = 10
    # How long a KILLed process may take to disappear (it may be in the
    # middle of a system call) before stop gives up on it.
    KILL_WAIT_S = 5
    PORT_FREE_TIMEOUT_S = 5
    POLL_INTERVAL_S = 0.05
    PROBE_OPEN_TIMEOUT_S = 1
    PROBE_READ_TIMEOUT_S = 2
    LOG_TAIL_LINES = 20
    LOG_TAIL_BYTES = 64 * 1024

    # Everything a probe of a server that is not (yet) answering can raise.
    PROBE_ERRORS = [SystemCallError, IOError, SocketError, Timeout::Error, Net::ProtocolError,
                    Net::HTTPBadResponse].freeze

    attr_reader :argv, :env, :chdir, :log_path, :port, :host, :pid, :exit_status, :tls

    # :argv :: the command, an Array of Strings (run without a shell)
    # :log_path :: file that receives the server's stdout and stderr (appended to)
    # :port :: the port the server binds, or nil for a process on a unix
    #          socket (a service: no port is checked at start and stop, and
    #          there is nothing to probe over HTTP)
    # :env :: extra environment variables; nil values unset (default: {})
    # :chdir :: working directory (default: the current one)
    # :host :: the address the server binds (default: 127.0.0.1)
    # :clean_env :: env is the whole environment: nothing of this process's is inherited (default: false)
    # :fds :: descriptor number => IO the server inherits at that number (default: {})
    # :tls :: the Tls::Certificate the server presents: its probes speak https and check the
    #         certificate against the run's authority (default: nil, http)
    def initialize(argv:, log_path:, port:, env: {}, chdir: Dir.pwd, host: Ports::LOCALHOST, clean_env: false, fds: {},
                   tls: nil)
      unless argv.is_a?(Array) && !argv.empty? && argv.all?(String)
        raise ArgumentError, "argv must be a non-empty Array of Strings (got #{argv.inspect})"
      end

      @argv = argv.dup.freeze
      @env = env.to_h { |key, value| [key.to_s, value&.to_s] }.freeze
      @chdir = chdir.to_s
      @log_path = log_path.to_s
      @port = port && Integer(port)
      @host = host
      @clean_env = clean_env
      @fds = fds
      @tls = tls
      @pid = nil
      @reaped = false
      @exit_status = nil
      @stop_result = nil
    end

    # Spawns the server. Raises SetupError when the port is already taken
    # (a probe would otherwise reach someone else's server) or the command
    # cannot be run. Returns self.
    def start
      raise Error, "server already started (pid #{@pid})" if @pid
      raise SetupError, "port #{port} is already in use on #{host}" if port && Ports.in_use?(port, host: host)

      FileUtils.mkdir_p(File.dirname(log_path))
      log = File.open(log_path, "a")
      @log_offset = log.size # readiness scans only what this server writes
      @log_rest = +""
      @log_matches = 0
      # [cmd, argv0] forces a direct exec even for a one-word command, which
      # Process.spawn would otherwise hand to a shell.
      @pid = Process.spawn(env, [argv[0], argv[0]], *argv[1..], chdir: chdir, pgroup: true,
                           in: File::NULL, out: log, err: log, unsetenv_others: @clean_env, close_others: true,
                           **@fds)
      @started_at = now
      self
    rescue SystemCallError => e
      raise SetupError, "cannot start #{argv.first}: #{e.message}"
    ensure
      log&.close
    end

    # The process group the server leads (its PID: it is spawned with
    # pgroup: true).
    def pgid
      @pid
    end

    # True while the server's main process has not exited.
    def alive?
      return false unless @pid

      reap
      !@reaped
    end

    # The PIDs of the server's live process tree (see ProcessTree).
    def processes
      @pid ? ProcessTree.pids(@pid, pgid: pgid) : []
    end

    # Waits until GET health_path answers HTTP 200, the tree has at least
    # expected_processes processes and, with ready_log, the log holds the
    # given line as many times as asked (one per booted worker). Returns the
    # seconds from spawn to ready. Raises SetupError as soon as the server
    # exits (with its exit status and log tail), or after timeout_s with
    # what the last probe saw and the log tail.
    #
    # :health_path :: path to probe (default: "/")
    # :timeout_s :: how long to wait (default: 60)
    # :expected_processes :: processes the booted server runs (default: 1)
    # :ready_log :: nil or [Regexp, count] (default: nil; see Servers)
    # :interval_s :: time between probes (default: 0.05)
    def wait_ready(health_path: "/", timeout_s: READY_TIMEOUT_S, expected_processes: 1, ready_log: nil,
                   interval_s: POLL_INTERVAL_S)
      raise Error, "server not started" unless @pid

      deadline = now + timeout_s
      loop do
        raise SetupError, failure("before it was ready") unless alive?

        seen = readiness(health_path, expected_processes, ready_log)
        return now - @started_at if seen[:ready]

        if now >= deadline
          raise SetupError, "server not ready after #{format_s(timeout_s)} (last probe: #{seen[:text]}): #{log_tail}"
        end

        sleep interval_s
      end
    end

    # Performs one GET path and checks the answer, as TechEmpower does
    # before measuring: raises SetupError naming the mismatch (status,
    # content type, or a body without the expected fragment, with a snippet
    # of what came back). Returns [status, body].
    #
    # :path :: the path to request
    # :expect_status :: the status the app must answer (default: 200)
    # :expect_content_type :: a prefix the Content-Type must start with, compared
    #                         case-insensitively, so "text/plain" accepts
    #                         "text/plain; charset=utf-8" (default: nil: any)
    # :expect_body :: a String the body must contain, or a Regexp it must match (default: nil: any body)
    # :timeout_s :: read timeout (default: 10)
    def check_app(path:, expect_status: 200, expect_content_type: nil, expect_body: nil, timeout_s: 10)
      status, body, content_type = http_get(path, read_timeout_s: timeout_s)
      AppCheck.verify!(path, status, content_type, body, expect_status: expect_status,
                                                         expect_content_type: expect_content_type,
                                                         expect_body: expect_body)
      [status, body]
    rescue *PROBE_ERRORS => e
      raise SetupError, "app check failed: GET #{path}: #{e.class}: #{e.message}"
    end

    # Stops the whole tree (see the class comment) and returns a Hash:
    # :stop_s (seconds taken), :killed (true when KILL was needed),
    # :exit_status (the main process's Process::Status, nil if unknown).
    # Safe to call more than once, before #start, and from an ensure.
    # Raises SetupError when a process survives KILL or the port is still
    # bound port_timeout_s after everything exited.
    #
    # :grace_s :: time allowed for a clean exit after TERM (default: 10)
    # :port_timeout_s :: time allowed for the port to become free (default: 5)
    def stop(grace_s: STOP_GRACE_S, port_timeout_s: PORT_FREE_TIMEOUT_S)
      return @stop_result if @stop_result
      return @stop_result = { stop_s: 0.0, killed: false, exit_status: nil } unless @pid

      started = now
      stopper = TreeStopper.new(@pid, pgid: pgid, reaped: method(:reaped?))
      killed = stopper.stop(grace_s: grace_s, kill_wait_s: KILL_WAIT_S)
      @stop_result = { stop_s: now - started, killed: killed, exit_status: @exit_status }
      note_in_log(format("stopped in %.2fs: server %s%s", @stop_result[:stop_s], describe_exit,
                         killed ? ", KILLed after a #{format_s(grace_s)} grace period" : ""))
      if port && !Ports.wait_free(port, timeout_s: port_timeout_s, host: host)
        raise SetupError, "port #{port} is still in use #{format_s(port_timeout_s)} after the server stopped"
      end

      @stop_result
    end

    # How the main process ended: "exited with status 1", "was killed by
    # signal 9 (SIGKILL)", or "exited" when the status is unknown.
    def exit_description
      describe_exit
    end

    # A failure reason for a server that ended when it should not have:
    # how it ended and when, the error its log names (not the last line of
    # a backtrace), then the log's tail on the following lines.
    def failure(when_text)
      tail = log_tail
      error = LogError.line(tail)
      "server #{describe_exit} #{when_text}#{": #{error}" if error}\n#{tail}"
    end

    # The last lines of the server's log, as one String.
    def log_tail(lines = LOG_TAIL_LINES)
      text = File.open(log_path, "rb") do |file|
        file.seek([file.size - LOG_TAIL_BYTES, 0].max)
        file.read
      end
      text.force_encoding(Encoding::UTF_8).scrub.lines.last(lines).join
    rescue Errno::ENOENT
      ""
    end

    private

    def readiness(health_path, expected_processes, ready_log)
      count = processes.size
      logged = ready_log && count_log_matches(ready_log[0])
      # With a ready log, no HTTP probe before the server says it is up: a
      # probe racing the boot would only measure a half-initialised server.
      log_ready = !ready_log || logged >= ready_log[1]
      status = log_ready ? probe_status(health_path) : "waiting for the boot log"
      status = "HTTP #{status} from a process that is not the server's" if status == 200 && !own_listener?
      ready = status == 200 && count >= expected_processes && log_ready
      text = "#{status.is_a?(Integer) ? "HTTP #{status}" : status}, #{count} of #{expected_processes} processes"
      text += ", #{logged} of #{ready_log[1]} workers booted" if ready_log
      { ready: ready, text: text }
    end

    # Whether the socket listening on the port is one of the server's own
    # processes'. Why ask: the port was free when it was chosen, not
    # reserved; another program may have bound it while this server booted
    # (or failed to boot), and that program's 200 would pass for this
    # server's (a CI run saw a server that exited before listening be taken
    # for ready). True where it cannot be told: no /proc tables, or no
    # listener in this network namespace (a server in a namespace of its
    # own).
    def own_listener?
      inodes = Ports.listener_inodes(port)
      return true if inodes.nil? || inodes.empty?

      Ports.held_by?(inodes, processes)
    end

    # The status of GET path, or a short text saying why there is none.
    def probe_status(path)
      http_get(path, read_timeout_s: PROBE_READ_TIMEOUT_S).first
    rescue *PROBE_ERRORS => e
      e.is_a?(Errno::ECONNREFUSED) ? "connection refused" : "#{e.class}: #{e.message}"
    end

    def http_get(path, read_timeout_s:)
      # p_addr nil: never go through a proxy, even when http_proxy is set.
      http = Net::HTTP.new(host, port, nil)
      http.open_timeout = PROBE_OPEN_TIMEOUT_S
      http.read_timeout = read_timeout_s
      http.write_timeout = read_timeout_s
      http.max_retries = 0
      if tls
        # The certificate is checked as the load engine checks it: against
        # the run's authority, for the address probed.
        http.use_ssl = true
        http.ca_file = tls.ca_path
        http.verify_mode = OpenSSL::SSL::VERIFY_PEER
      end
      response = http.start { |connection| connection.get(path, "Connection" => "close") }
      [response.code.to_i, response.body.to_s, response["content-type"]]
    end

    # Counts lines matching pattern in what the server logged since start,
    # reading only what is new since the last call.
    def count_log_matches(pattern)
      chunk = File.open(log_path, "rb") do |file|
        file.seek(@log_offset)
        file.read
      end
      @log_offset += chunk.bytesize
      lines = (@log_rest + chunk).split("\n", -1)
      @log_rest = lines.pop || +""
      @log_matches += lines.count { |line| line.force_encoding(Encoding::UTF_8).scrub.match?(pattern) }
    rescue Errno::ENOENT
      @log_matches
    end

    # Appends a line of rackbench's own to the server log, so the log of a
    # trial also tells how it ended.
    def note_in_log(text)
      File.write(log_path, "[rackbench] #{text}\n", mode: "a")
    rescue SystemCallError
      nil # the log is for people; never fail a stop over it
    end

    def reaped?
      reap
      @reaped
    end

    # Collects the main process's exit status if it has exited (without
    # blocking).
    def reap
      return if @reaped || !@pid

      reaped_pid, status = Process.waitpid2(@pid, Process::WNOHANG)
      return unless reaped_pid

      @reaped = true
      @exit_status = status
    rescue Errno::ECHILD
      @reaped = true # reaped elsewhere: the status is unknown
    end

    def describe_exit
      status = @exit_status
      return "exited" unless status
      return "exited with status #{status.exitstatus}" if status.exited?
      return "was killed by signal #{status.termsig} (SIG#{Signal.signame(status.termsig)})" if status.signaled?

      "exited (#{status.inspect})"
    end

    def format_s(seconds)
      seconds.to_f == seconds.to_i ? "#{seconds.to_i}s" : "#{seconds}s"
    end
  end
end

# Loaded after the class exists: it reopens ServerProcess, which would
# otherwise trigger Rackbench's autoload of this very file.
require_relative "server_process/tree_stopper"
require_relative "server_process/app_check"
require_relative "server_process/session_check"
require_relative "server_process/tls_check"
require_relative "server_process/log_error"
