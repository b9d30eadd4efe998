# frozen_string_literal: true

require_relative "../monotonic_clock"
require "json"
require "open3"

module Rackbench
  # Makes sure nothing an experiment started outlives its runner, however
  # the runner ends (kill -9 included).
  #
  # Every process rackbench starts for an experiment carries
  # Watchdog.marker_env(results_dir) in its environment, and so does
  # everything those processes start, including what leaves the process
  # group or the session. A sweep (rackbench-guard --sweep) stops every
  # process of this user (of any user when the runner is root: the services
  # it starts under their own accounts) carrying that exact entry, and
  # their descendants: TERM, up to grace_s, KILL, tracking each process by
  # PID and start time.
  #
  #   watchdog = Watchdog.start(results_dir: dir, grace_s: 10)
  #   begin
  #     ... spawn processes with Watchdog.marker_env(dir) in their env ...
  #   ensure
  #     watchdog.stop # => { termed: 0, killed: 0, survivors: 0 }
  #   end
  #
  # The watchdog process (rackbench-guard --watch) blocks reading a pipe
  # whose only write end this process holds. When this process dies, by any
  # signal, the kernel closes that end; the watchdog reads end of file and
  # sweeps. It runs in a process group of its own and ignores INT, HUP and
  # TERM, so the signals that take the runner down do not take it too.
  #
  # Limits: a watchdog KILLed itself sweeps nothing; a child this process
  # creates with fork (without exec) inherits the pipe's write end and keeps
  # the watchdog waiting until it exits (spawned children do not: the end is
  # close-on-exec); a process that clears its environment, or overwrites
  # the marker with a long process title ($0=) and has no marked ancestor,
  # is not found.
  class Watchdog
    include MonotonicClock

    # The environment variable that marks the processes of an experiment.
    MARKER = "RACKBENCH_RESULTS_DIR"
    BINARY = File.expand_path("../../rackbench-guard", __dir__)
    # The guard's allowance for KILLed processes to disappear
    # (SWEEP_KILL_WAIT_MS in ext/rackbench_engine/guard/sweep.h).
    KILL_WAIT_S = 5
    # Beyond grace and KILL wait, for the watchdog to scan and exit on a
    # loaded machine before #stop gives up on it.
    STOP_SLACK_S = 10
    POLL_INTERVAL_S = 0.02
    COUNT_KEYS = %i[termed killed survivors].freeze

    # rackbench-guard is not built.
    class GuardMissing < SetupError; end

    # The watchdog or a sweep could not do its job.
    class Failed < Error; end

    # The environment entry that marks a process as one of the experiment
    # writing to results_dir: { "RACKBENCH_RESULTS_DIR" => absolute path }.
    # Add it to every process spawned for the experiment (as a new
    # variable: Process.spawn appends those at the end of the environment,
    # where a process title written over the start of it does not reach).
    def self.marker_env(results_dir)
      { MARKER => File.expand_path(results_dir) }
    end

    # Starts a watchdog for the experiment writing to results_dir and
    # returns it. Raises GuardMissing when rackbench-guard is not built,
    # Failed when it cannot be started.
    #
    # :results_dir :: the experiment's results directory
    # :grace_s :: time the experiment's processes get after TERM before KILL
    # :binary :: the rackbench-guard executable (default: lib/rackbench-guard)
    def self.start(results_dir:, grace_s:, binary: BINARY)
      new(results_dir: results_dir, grace_s: grace_s, binary: binary).start
    end

    # Stops now every process marked for results_dir (see the class
    # comment), as what an earlier runner that died may have left, and
    # returns the counts { termed:, killed:, survivors: } (survivors:
    # processes that outlived KILL). Blocks for up to grace_s plus 5 s of
    # KILL wait when something ignores TERM; returns after one scan when
    # nothing is marked. Raises GuardMissing or Failed.
    #
    # :results_dir :: the experiment's results directory
    # :grace_s :: time the processes get after TERM before KILL
    # :binary :: the rackbench-guard executable (default: lib/rackbench-guard)
    def self.sweep(results_dir:, grace_s:, binary: BINARY)
      check_binary!(binary)
      out, err, status = Open3.capture3(unmarked_env, binary, "--sweep", marker_entry(results_dir),
                                        grace_ms(grace_s).to_s, close_others: true)
      parse_counts(out, err, status, "sweep")
    rescue SystemCallError => e
      raise Failed, "cannot run #{binary}: #{e.message}"
    end

    # "RACKBENCH_RESULTS_DIR=/absolute/results", the entry the guard matches.
    def self.marker_entry(results_dir)
      raise ArgumentError, "results_dir must be a non-empty path" if results_dir.to_s.empty?

      marker_env(results_dir).map { |name, value| "#{name}=#{value}" }.first
    end

    def self.grace_ms(grace_s) # :nodoc:
      grace_ms = (Float(grace_s) * 1000).round
      raise ArgumentError, "grace_s must be >= 0 (got #{grace_s.inspect})" if grace_ms.negative?

      grace_ms
    end

    def self.check_binary!(binary) # :nodoc:
      return if File.executable?(binary)

      raise GuardMissing, "rackbench-guard not found at #{binary}: run bin/setup"
    end

    # The guard itself never carries the marker: a later sweep for the same
    # directory must not count, or stop, the watchdog of a live runner.
    def self.unmarked_env # :nodoc:
      { MARKER => nil }
    end

    # The counts from the guard's one line of JSON, or Failed naming why
    # there are none.
    def self.parse_counts(out, err, status, what) # :nodoc:
      unless status.success?
        reason = err.to_s.lines.map(&:strip).reject(&:empty?).last || describe_exit(status)
        raise Failed, "watchdog #{what} failed: #{reason}"
      end
      counts = JSON.parse(out.to_s.lines.last.to_s)
      unless counts.is_a?(Hash) && COUNT_KEYS.all? { |key| counts[key.to_s].is_a?(Integer) }
        raise Failed, "watchdog #{what}: unexpected output #{out.to_s.strip.inspect}"
      end

      COUNT_KEYS.to_h { |key| [key, counts[key.to_s]] }
    rescue JSON::ParserError
      raise Failed, "watchdog #{what}: unexpected output #{out.to_s.strip.inspect}"
    end

    def self.describe_exit(status) # :nodoc:
      status.signaled? ? "killed by SIG#{Signal.signame(status.termsig)}" : "exit status #{status.exitstatus}"
    end

    attr_reader :results_dir, :grace_s, :binary, :pid

    # See Watchdog.start, which also starts it.
    def initialize(results_dir:, grace_s:, binary: BINARY)
      @entry = self.class.marker_entry(results_dir)
      @results_dir = File.expand_path(results_dir)
      @grace_s = grace_s
      @grace_ms = self.class.grace_ms(grace_s)
      @binary = binary
      @pid = nil
      @exit_status = nil
      @stopped = false
      @result = nil
    end

    # Spawns the watchdog; returns self.
    def start
      raise Error, "watchdog already started (pid #{@pid})" if @pid

      Watchdog.check_binary!(binary)
      # IO.pipe makes both ends close-on-exec: no server, engine or setup
      # script spawned later inherits the write end, which would keep the
      # watchdog from ever seeing end of file while that process lives.
      # close_others: the watchdog holds nothing else of this process (a
      # socket or pipe it inherited would stay open as long as the watchdog
      # waits); chdir "/": nor a directory.
      watch_reader, @watch_writer = IO.pipe
      @report_reader, report_writer = IO.pipe
      @pid = Process.spawn(Watchdog.unmarked_env, binary, "--watch", @entry, @grace_ms.to_s,
                           in: watch_reader, out: report_writer, err: report_writer, pgroup: true, chdir: "/",
                           close_others: true)
      self
    rescue SystemCallError => e
      [@watch_writer, @report_reader].each { |io| io&.close }
      raise Failed, "cannot start the watchdog #{binary}: #{e.message}"
    ensure
      [watch_reader, report_writer].each { |io| io&.close }
    end

    # True while the watchdog process runs (false once it exited, say
    # because someone KILLed it: the runner may then warn or start another).
    def alive?
      @pid ? !reap : false
    end

    # Closes the pipe: the watchdog sweeps (finding nothing after a clean
    # run, in one scan) and exits. Waits for it, up to grace_s plus the
    # guard's KILL wait plus 10 s, and returns the sweep's counts
    # { termed:, killed:, survivors: }. Raises Failed when the watchdog
    # exited before (it was killed) or failed, or did not finish in time
    # (it is then KILLed). Safe to call twice, and before #start: later
    # calls return the first call's counts (nil if it raised).
    def stop
      return @result if @stopped

      @stopped = true
      return @result = nil unless @pid

      @watch_writer.close
      status = wait_exit(@grace_ms / 1000.0 + KILL_WAIT_S + STOP_SLACK_S)
      report = @report_reader.read
      @result = Watchdog.parse_counts(report, report, status, "--watch")
    ensure
      @report_reader&.close unless @report_reader&.closed?
    end

    private

    # The watchdog's exit status if it has exited (reaping it), else nil.
    def reap
      return @exit_status if @exit_status

      done = Process.wait2(@pid, Process::WNOHANG)
      @exit_status = done&.last
    end

    # The watchdog's exit status; KILLs it and raises Failed past timeout_s.
    def wait_exit(timeout_s)
      deadline = now + timeout_s
      loop do
        status = reap
        return status if status

        if now >= deadline
          Process.kill(:KILL, @pid)
          @exit_status = Process.wait2(@pid).last
          raise Failed, "the watchdog (pid #{@pid}) did not finish its sweep within #{timeout_s.round(1)} s"
        end
        sleep POLL_INTERVAL_S
      end
    end
  end
end
