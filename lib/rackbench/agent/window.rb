# The measured window, as seen from inside a server process. Loaded by
# rackbench's launcher (bundle_env/launcher.rb) into every server it starts
# when the runner sets RACKBENCH_WINDOW=1, after identity.rb and before any
# listener file (agent/inside.rb, ...).
#
# The runner writes, each whole by rename, into $RACKBENCH_TRIAL_DIR/inside:
#
#   window.start  when the load engine's measured window starts
#   window.end    when it ends
#
# (content: the runner's CLOCK_MONOTONIC in seconds, as text). A watcher
# thread in every server process (the exec'd one and every child forked
# through Ruby) waits for each and calls each registered listener's
# window_started(dir), then window_ended(dir), once each, in that process;
# it ends after window.end.
#
# How it waits: the runner also hands the server one pipe per edge
# (RACKBENCH_WINDOW_FDS names their read ends, inherited by every fork) and
# closes its write end right after writing the edge's file. The watcher
# blocks reading the pipe, off the GVL, with no wakeup at all until the end
# of file arrives, in every process at once. A watcher that has no such
# descriptor (or cannot read it) polls for the file every POLL_INTERVAL_S
# instead: a stat(2) of a frozen path, no allocation, but 100 wakeups a
# second that each take the GVL from a busy server (bench/agent_overhead.rb
# measured that at about 2.6% of a Puma's CPU per request).
#
# Where a watcher has no pipe and RACKBENCH_WINDOW_FIFO is "1" (an
# instructions trial, whose window counts every wakeup: Passenger's app
# processes, to which Passenger passes no descriptor), it waits on a FIFO
# of its own, inside/<pid>.window.fifo, blocked opening it for reading
# until the runner opens it for writing at each edge: no wakeup either.
#
# The watcher wakes late under load (it waits for the GVL, up to a
# timeslice), so a listener must take its own clock readings at each edge
# and never assume it ran at the instant the file appeared.
#
# Runs inside the measured server, under every benchmarked ruby: no gem is
# required, it parses on old rubies, and it never raises into the server.
module RackbenchWindow
  DIRECTORY = "inside".freeze
  START_FILE = "window.start".freeze
  END_FILE = "window.end".freeze
  FDS_VAR = "RACKBENCH_WINDOW_FDS".freeze
  FIFO_VAR = "RACKBENCH_WINDOW_FIFO".freeze
  FIFO_SUFFIX = ".window.fifo".freeze
  # How often a watcher without the edges' pipes looks for the runner's files. Short enough that
  # a process's edges are close to the engine's (its own clock readings
  # give the exact duration it counted over), long enough that the poll
  # costs nothing measurable (bench/agent_overhead.rb).
  POLL_INTERVAL_S = 0.01

  @listeners = []
  # In this process: whether it is a child forked through Ruby, and how
  # many children it forked so (for listeners that tell a master from a
  # worker; see .role).
  @forked_child = false
  @children_forked = 0

  class << self
    attr_reader :listeners, :children_forked

    def forked_child?
      @forked_child
    end

    # "worker" in a child forked through Ruby; "master" in a process that
    # forked children so; "single" otherwise (a server that never forks).
    def role
      return "worker" if @forked_child

      @children_forked > 0 ? "master" : "single"
    end

    # The channel's directory, or nil outside a trial.
    def directory
      dir = ENV["RACKBENCH_TRIAL_DIR"]
      dir && File.join(dir, DIRECTORY)
    end

    # Registers listener (responds to window_started(dir) and
    # window_ended(dir)). Returns listener.
    def listen(listener)
      @listeners << listener
      listener
    end

    # Starts this process's watcher thread (once per process). Returns
    # whether one runs.
    def watch
      dir = directory
      return false unless dir && defined?(Thread)

      # Frozen: File.exist? copies (allocates) an unfrozen path on every
      # call, which would count in the allocations of the window.
      start_path = File.join(dir, START_FILE).freeze
      end_path = File.join(dir, END_FILE).freeze
      @edges ||= edge_pipes
      edges = @edges
      @watcher = Thread.new { run(dir, start_path, end_path, edges || fifo(dir)) }
      true
    rescue StandardError => e
      warn "rackbench window: no watcher: #{e.class}: #{e.message}"
      false
    end

    # Called in a child right after a fork through Ruby: the parent's
    # watcher thread did not survive the fork, so the child starts its own.
    # A child forked after window.start (a worker replaced mid-window)
    # starts its window at once; one forked after window.end calls nothing.
    def forked
      @forked_child = true
      @children_forked = 0
      watch
    end

    def parent_forked
      @children_forked += 1
    end

    private

    # [start, end] IOs of the edges' pipes the runner handed down, or nil
    # (no such variable, or descriptors that are not pipes: polling then).
    def edge_pipes
      fds = ENV[FDS_VAR].to_s.split(",").map { |fd| Integer(fd) }
      return nil unless fds.size == 2

      ios = fds.map { |fd| IO.for_fd(fd, autoclose: false) }
      ios.all? { |io| io.stat.pipe? } ? ios : nil
    rescue StandardError
      nil
    end

    # [fifo_path, fifo_path] when this process waits on a FIFO of its own
    # (RACKBENCH_WINDOW_FIFO, and no pipes), nil otherwise (polling).
    def fifo(dir)
      return nil unless ENV[FIFO_VAR] == "1" && File.respond_to?(:mkfifo)

      path = File.join(dir, "#{Process.pid}#{FIFO_SUFFIX}")
      File.mkfifo(path) unless File.exist?(path)
      [path, path]
    rescue StandardError
      nil
    end

    # Returns once path exists: after the end of file on io (the runner
    # writes the file, then closes the pipe), or after the runner opened
    # the FIFO (io is its path) with the file there, else by polling.
    def wait_for(path, io)
      if io.is_a?(String)
        wait_fifo(path, io)
      elsif io
        begin
          io.read # blocks off the GVL until the runner closes its end; reads nothing
        rescue StandardError
          nil # a descriptor closed under us: poll
        end
      end
      sleep POLL_INTERVAL_S until File.exist?(path)
    end

    # Blocks opening the FIFO (off the GVL) until the runner opens it, as
    # often as it takes for path to be there: an opening that came before
    # the edge's file was written waits again.
    def wait_fifo(path, fifo)
      File.open(fifo, "r", &:read) until File.exist?(path)
    rescue StandardError
      nil # polls
    end

    def run(dir, start_path, end_path, edges)
      # Puma lists the threads an app starts while it boots unless marked so.
      Thread.current[:fork_safe] = true
      # Named in /proc/PID/task/TID/comm (15 bytes), where
      # bench/agent_overhead.rb reads the CPU time it takes.
      Thread.current.name = "rackbench-window" if Thread.current.respond_to?(:name=)
      return if File.exist?(end_path) # forked after the window: nothing to count

      wait_for(start_path, edges && edges[0])
      notify(:window_started, dir)
      wait_for(end_path, edges && edges[1])
      notify(:window_ended, dir)
    rescue StandardError => e
      warn "rackbench window: watcher stopped: #{e.class}: #{e.message}"
    end

    # Calls event on every listener; one listener's failure is a warning
    # and never keeps the others from their call.
    def notify(event, dir)
      @listeners.each do |listener|
        begin
          listener.public_send(event, dir)
        rescue StandardError => e
          warn "rackbench window: #{listener.class} #{event}: #{e.class}: #{e.message}"
        end
      end
    end
  end

  # Follows forks through Ruby (Process._fork, Ruby 3.1+).
  module ForkHook
    def _fork
      pid = super
      if pid.zero?
        RackbenchWindow.forked
      else
        RackbenchWindow.parent_forked
      end
      pid
    end
  end

  # Rubies before 3.1: the two methods servers fork with (see identity.rb).
  module LegacyForkHook
    def fork(&block)
      if block
        pid = super { RackbenchWindow.forked; block.call }
        RackbenchWindow.parent_forked
        return pid
      end

      pid = super
      pid.nil? ? RackbenchWindow.forked : RackbenchWindow.parent_forked
      pid
    end
  end
end

if RackbenchWindow.watch
  if Process.respond_to?(:_fork)
    Process.singleton_class.prepend(RackbenchWindow::ForkHook)
  elsif Process.respond_to?(:fork)
    Process.singleton_class.prepend(RackbenchWindow::LegacyForkHook)
    Kernel.prepend(RackbenchWindow::LegacyForkHook)
  end
end
