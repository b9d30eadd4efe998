# frozen_string_literal: true

require_relative "../monotonic_clock"
require "etc"

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
  # sample; one born later counts from zero; one that exits keeps what was
  # last read from it (the few milliseconds between that read and its exit
  # are lost). The first sample is taken synchronously by #start and the
  # last by #stop, so the window is exactly start..stop.
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
      @cpu = {}     # process key => [first utime, first stime, last utime, last stime] (ticks)
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

    def take_sample
      entries = ProcessTree.entries(@root_pid, pgid: @pgid, proc_dir: @proc_dir)
      rss_total = 0
      pss_total = 0
      counted = 0
      entries.each do |entry|
        memory = memory_of(entry)
        next unless memory # vanished while being read

        counted += 1
        rss_total += memory[0]
        pss_total = memory[1] && pss_total && pss_total + memory[1]
        record_cpu(entry)
      end
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

    def record_cpu(entry)
      times = @cpu[entry.key]
      if times
        times[2] = entry.utime_ticks
        times[3] = entry.stime_ticks
      elsif born_in_window?(entry)
        @cpu[entry.key] = [0, 0, entry.utime_ticks, entry.stime_ticks]
      else
        @cpu[entry.key] = [entry.utime_ticks, entry.stime_ticks, entry.utime_ticks, entry.stime_ticks]
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
      user_ticks = @cpu.each_value.sum { |times| times[2] - times[0] }
      system_ticks = @cpu.each_value.sum { |times| times[3] - times[1] }
      {
        rss_peak_bytes: rss.max, rss_mean_bytes: mean(rss).round,
        pss_peak_bytes: pss_known.max, pss_mean_bytes: pss_known.empty? ? nil : mean(pss_known).round,
        cpu_user_s: user_ticks.to_f / @clock_ticks_per_s, cpu_system_s: system_ticks.to_f / @clock_ticks_per_s,
        processes_peak: counts.max, processes_mean: mean(counts).round(2),
        samples: @samples.size, duration_s: duration_s
      }
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
