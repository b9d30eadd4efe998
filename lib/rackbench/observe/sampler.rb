# frozen_string_literal: true

require_relative "../monotonic_clock"
require "etc"
require "set"

module Rackbench
  # Samples a server's whole process tree (see ProcessTree) from /proc on a
  # background thread while a trial measures: memory (RSS and PSS), CPU time
  # and the number of processes. It only reads files, so it costs the
  # measured server nothing but the kernel's work to answer.
  #
  #   sampler = Sampler.new(server.pid).start
  #   ... measure ...
  #   summary = sampler.stop  # => { rss_peak_bytes: ..., cpu_user_s: ..., ... }
  #
  # Memory: RSS counts every resident page of every process, so pages that
  # forked workers share copy-on-write with their master are counted once
  # per process. PSS (proportional set size, from /proc/PID/smaps_rollup)
  # splits each shared page among the processes sharing it; summed over the
  # tree it is the memory the server really occupies. Where smaps_rollup
  # cannot be read (kernels before 4.14, no permission) PSS is nil and RSS
  # falls back to /proc/PID/stat.
  #
  # CPU: the user and system time the tree spent inside the window, summed
  # over its processes. A process present at start counts from its first
  # sample; one born later counts from zero. One that exits is counted
  # whole where it can be: a process of the tree that waited for its
  # children took their whole times into its own cutime and cstime, so
  # when the children that left under it were all born in the window, and
  # what it took covers at least what was read from them, its children's
  # times are the window's, exactly (children too short-lived to be
  # sampled included). Otherwise (a child older than the window, a parent
  # that never waited) an exited process keeps what was last read from it,
  # and the time between that read and its exit is lost: on a busy machine
  # the sampling thread can run late, and a child that burned 0.25 s of
  # CPU was read at 0.17 s. The first sample is taken synchronously by
  # #start and the last by #stop, so the window is exactly start..stop.
  class Sampler
    include MonotonicClock

    DEFAULT_INTERVAL_S = 0.25
    KIB = 1024

    attr_reader :root_pid, :interval_s

    # :interval_s :: time between samples (default: 0.25)
    # :pgid :: process group to include (default: root_pid; see ProcessTree.entries)
    # :proc_dir :: where /proc is (default: "/proc"; tests use a fake tree)
    def initialize(root_pid, interval_s: DEFAULT_INTERVAL_S, pgid: root_pid, proc_dir: ProcessTree::PROC_DIR)
      raise ArgumentError, "interval_s must be positive (got #{interval_s.inspect})" unless interval_s.to_f.positive?

      @root_pid = root_pid
      @pgid = pgid
      @interval_s = interval_s.to_f
      @proc_dir = proc_dir
      @clock_ticks_per_s = Etc.sysconf(Etc::SC_CLK_TCK) || 100
      @page_bytes = Etc.sysconf(Etc::SC_PAGESIZE) || 4096
      @mutex = Mutex.new
      @wakeup = ConditionVariable.new
      @samples = [] # [rss_bytes, pss_bytes or nil, process count]
      @cpu = {}     # process key => CpuTimes
      @last_keys = [] # the processes of the last sample, zombies included
      @stopping = false
      @thread = nil
      @summary = nil
    end

    # Takes the first sample now, then one every interval_s on a thread.
    # Returns self.
    def start
      raise Error, "sampler already started" if @thread || @summary

      @started_at = now
      @window_start_ticks = uptime_ticks
      take_sample
      @thread = Thread.new { run }
      @thread.report_on_exception = false
      self
    end

    # Stops sampling, takes the last sample and returns the summary Hash:
    # rss_peak_bytes, rss_mean_bytes, pss_peak_bytes, pss_mean_bytes (nil
    # when unreadable), cpu_user_s, cpu_system_s, processes_peak,
    # processes_mean, samples, duration_s. Calling it again returns the same
    # summary; calling it before #start raises.
    def stop
      return @summary if @summary
      raise Error, "sampler was not started" unless @thread

      @mutex.synchronize do
        @stopping = true
        @wakeup.signal
      end
      @thread.join # re-raises anything that broke the sampling thread
      take_sample
      @summary = summarize(now - @started_at)
    end

    # How many samples have been taken so far.
    def sample_count
      @samples.size
    end

    private

    def run
      next_at = now + @interval_s
      loop do
        @mutex.synchronize do
          # Wakes at the next tick or when #stop signals; also guards against
          # spurious wake-ups by re-checking the time.
          # The time left is read once: reading the clock twice let a
          # loaded machine pass next_at between the two, and a negative
          # wait raised (ArgumentError) and took the run down.
          until @stopping || (left_s = next_at - now) <= 0
            @wakeup.wait(@mutex, left_s)
          end
        end
        break if @stopping

        take_sample
        next_at += @interval_s
        next_at = now + @interval_s if next_at < now # fell behind: do not burst
      end
    end

    # Zombies count for CPU (an exited process's stat holds its final
    # times until its parent waits for it), not for memory or processes.
    def take_sample
      entries = ProcessTree.entries(@root_pid, pgid: @pgid, zombies: true, proc_dir: @proc_dir)
      rss_total = 0
      pss_total = 0
      counted = 0
      entries.each do |entry|
        record_cpu(entry)
        next if entry.zombie?

        memory = memory_of(entry)
        next unless memory # vanished while being read

        counted += 1
        rss_total += memory[0]
        pss_total = memory[1] && pss_total && pss_total + memory[1]
      end
      @last_keys = entries.map(&:key)
      @samples << [rss_total, pss_total, counted]
    end

    # [rss_bytes, pss_bytes or nil] for one process, or nil if it is gone.
    def memory_of(entry)
      rollup = File.read(File.join(@proc_dir, entry.pid.to_s, "smaps_rollup"))
      rss_kib = rollup[/^Rss:\s+(\d+) kB/, 1]
      pss_kib = rollup[/^Pss:\s+(\d+) kB/, 1]
      [rss_kib ? rss_kib.to_i * KIB : entry.rss_pages * @page_bytes, pss_kib && pss_kib.to_i * KIB]
    rescue Errno::ENOENT, Errno::ESRCH, Errno::EACCES, Errno::EPERM, Errno::EINVAL
      # smaps_rollup is missing both when the process exited (then its stat
      # is gone too) and on old kernels or without permission.
      return nil unless File.exist?(File.join(@proc_dir, entry.pid.to_s, "stat"))

      [entry.rss_pages * @page_bytes, nil]
    end

    # One process's times (ticks), each [utime, stime, cutime, cstime]:
    # at its first sample (zeros when it was born in the window) and at
    # its last.
    CpuTimes = Struct.new(:first, :last, :ppid, :born, keyword_init: true) do
      def own = [last[0] - first[0], last[1] - first[1]]
      def waited = [last[2] - first[2], last[3] - first[3]]
    end
    private_constant :CpuTimes

    def record_cpu(entry)
      now = [entry.utime_ticks, entry.stime_ticks, entry.cutime_ticks, entry.cstime_ticks]
      times = @cpu[entry.key]
      if times
        times.last = now
      elsif born_in_window?(entry)
        @cpu[entry.key] = CpuTimes.new(first: [0, 0, 0, 0], last: now, ppid: entry.ppid, born: true)
      else
        @cpu[entry.key] = CpuTimes.new(first: now, last: now, ppid: entry.ppid, born: false)
      end
    end

    # A process first seen after the first sample normally started inside
    # the window, so all its CPU time belongs to it. One that is older (it
    # joined the tree late) counts only from its first sample.
    def born_in_window?(entry)
      !@samples.empty? && @window_start_ticks && entry.start_ticks >= @window_start_ticks
    end

    def summarize(duration_s)
      rss = @samples.map { |sample| sample[0] }
      pss = @samples.map { |sample| sample[1] }
      counts = @samples.map { |sample| sample[2] }
      pss_known = pss.compact
      user_ticks, system_ticks = cpu_ticks
      {
        rss_peak_bytes: rss.max, rss_mean_bytes: mean(rss).round,
        pss_peak_bytes: pss_known.max, pss_mean_bytes: pss_known.empty? ? nil : mean(pss_known).round,
        cpu_user_s: user_ticks.to_f / @clock_ticks_per_s, cpu_system_s: system_ticks.to_f / @clock_ticks_per_s,
        processes_peak: counts.max, processes_mean: mean(counts).round(2),
        samples: @samples.size, duration_s: duration_s
      }
    end

    # [user, system] ticks of the window: each process's own, and where a
    # process of the last sample waited for the children that left under
    # it, their whole times from its cutime and cstime instead of what was
    # last read from them (see the class comment).
    def cpu_ticks
      counted = @cpu.transform_values(&:own)
      groups = reaped_under(Set.new(@last_keys))
      groups.each do |parent, reaped|
        waited = @cpu[parent].waited
        next unless reaped.all? { |key| @cpu[key].born }
        next if waited.sum < reaped.sum { |key| counted[key].sum }

        reaped.each { |key| counted[key] = [0, 0] }
        counted[parent] = [counted[parent][0] + waited[0], counted[parent][1] + waited[1]]
      end
      # A process of the last sample under which no process that was read
      # has left: what it waited for in the window lived and died between
      # two samples (every process of the tree at the start was read then,
      # and children still there, zombies included, are not waited for
      # yet), so its cutime and cstime hold them, whole.
      (@last_keys - groups.keys).each do |key|
        waited = @cpu[key].waited
        counted[key] = [counted[key][0] + waited[0], counted[key][1] + waited[1]]
      end
      [counted.each_value.sum(&:first), counted.each_value.sum(&:last)]
    end

    # { key of a process of the last sample => keys of the processes that
    # exited under it (their nearest ancestor still there) }.
    def reaped_under(alive)
      alive_by_pid = alive.to_h { |key| [key[0], key] }
      gone = @cpu.keys.reject { |key| alive.include?(key) }
      gone_by_pid = gone.group_by(&:first)
      gone.each_with_object(Hash.new { |h, k| h[k] = [] }) do |key, groups|
        ancestor = nearest_alive_ancestor(key, alive_by_pid, gone_by_pid)
        groups[ancestor] << key if ancestor
      end
    end

    def nearest_alive_ancestor(key, alive_by_pid, gone_by_pid)
      seen = 0
      while key && (seen += 1) < 64
        ppid = @cpu[key].ppid
        return alive_by_pid[ppid] if alive_by_pid.key?(ppid)

        # An exited parent: the latest of that pid that started before it.
        key = gone_by_pid.fetch(ppid, []).select { |k| k[1] <= key[1] }.max_by { |k| k[1] }
      end
      nil
    end

    def mean(values)
      values.sum.to_f / values.size
    end

    # Seconds since boot in clock ticks, the unit of /proc/PID/stat's
    # start time; nil when /proc/uptime cannot be read.
    def uptime_ticks
      (File.read(File.join(@proc_dir, "uptime")).split.first.to_f * @clock_ticks_per_s).floor
    rescue Errno::ENOENT, Errno::EACCES
      nil
    end
  end
end
