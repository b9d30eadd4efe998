# The counting agent: what a server process does over the measured window,
# counted from inside. Loaded by rackbench's launcher after agent/window.rb
# when the trial asks for it (RACKBENCH_INSIDE=counting); registers with
# the window channel (RackbenchWindow) and, in every server process, takes
# one snapshot of its counters at the window's start and one at its end,
# then writes
#
#   $RACKBENCH_TRIAL_DIR/inside/<pid>.counts.json
#
# with the deltas (GC runs and time, allocated objects, RubyVM.stat), the
# YJIT stats and the memory (RSS, PSS) at the end, the memory at the start,
# the process's role and its own clock readings: the watcher wakes late
# under load, so the runner divides each process's deltas by its own
# duration (doc/output.md, "The inside document").
#
# It costs nothing between the two edges: no hook, no TracePoint, no
# thread of its own (the window's watcher polls; that is all). At each
# edge the counters that move with the app's work (allocations, GC) are
# read closest to the edge: last at the start, first at the end, so the
# agent's own allocations (reading smaps_rollup, building the snapshot)
# fall outside the counted interval.
#
# Runs inside the measured server under every benchmarked ruby: no gem is
# required (its own JSON writer), it parses on old rubies, and it never
# raises into the server.
require_relative "plain_json"
require_relative "whole_file"

module RackbenchInside
  COUNTS_SUFFIX = ".counts.json".freeze
  # GC.stat keys read at each edge; nil where the ruby has no such key.
  GC_KEYS = %i[count minor_gc_count major_gc_count heap_live_slots heap_allocated_pages compact_count].freeze
  SMAPS_ROLLUP = "/proc/self/smaps_rollup".freeze

  module_function

  def clock_s
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # One snapshot at the window's start ("warmup end"): memory, VM and JIT
  # first, then GC, then the clock, then allocations last.
  def start_snapshot
    snap = { memory: memory, vm: vm_stat, gc: gc_stat, gc_time_ns: gc_time_ns, at_s: clock_s }
    snap[:allocated] = allocated_objects
    snap
  end

  # One snapshot at the window's end: allocations first, then the clock,
  # then GC, then VM, JIT and memory.
  def end_snapshot
    allocated = allocated_objects
    at_s = clock_s
    { allocated: allocated, at_s: at_s, gc: gc_stat, gc_time_ns: gc_time_ns, vm: vm_stat, yjit: yjit,
      memory: memory }
  end

  def allocated_objects
    return nil unless defined?(GC) && GC.respond_to?(:stat)

    GC.stat(:total_allocated_objects)
  rescue StandardError
    nil
  end

  # GC_KEYS => value (nil for a key this ruby does not have).
  def gc_stat
    stat = defined?(GC) && GC.respond_to?(:stat) ? GC.stat : {}
    result = {}
    GC_KEYS.each { |key| result[key] = stat[key].is_a?(Integer) ? stat[key] : nil }
    result
  rescue StandardError
    {}
  end

  # GC.total_time in ns, or nil where it does not exist or is not
  # measured. The agent never turns GC.measure_total_time on: on rubies
  # where it is off by default, measuring would cost the server time.
  def gc_time_ns
    return nil unless defined?(GC) && GC.respond_to?(:total_time)
    return nil if GC.respond_to?(:measure_total_time) && !GC.measure_total_time

    GC.total_time
  rescue StandardError
    nil
  end

  # The Integer values of RubyVM.stat ({} where there is none: JRuby).
  def vm_stat
    return {} unless defined?(RubyVM) && RubyVM.respond_to?(:stat)

    RubyVM.stat.select { |_key, value| value.is_a?(Integer) }
  rescue StandardError
    {}
  end

  # nil unless YJIT is enabled; else its runtime stats' Integer and Float
  # values (what this ruby's YJIT gives without --yjit-stats: code sizes,
  # and more on newer rubies), "enabled" and "ratio_in_yjit" (nil unless
  # the ruby computed it, with --yjit-stats).
  def yjit
    return nil unless defined?(RubyVM::YJIT) && RubyVM::YJIT.respond_to?(:enabled?) && RubyVM::YJIT.enabled?

    stats = RubyVM::YJIT.respond_to?(:runtime_stats) ? RubyVM::YJIT.runtime_stats : nil
    result = { "enabled" => true }
    (stats || {}).each do |key, value|
      result[key.to_s] = value if value.is_a?(Integer) || (value.is_a?(Float) && value.finite?)
    end
    ratio = stats && stats[:ratio_in_yjit]
    result["ratio_in_yjit"] = ratio.is_a?(Numeric) ? ratio.to_f : nil
    result
  rescue StandardError
    { "enabled" => true, "ratio_in_yjit" => nil }
  end

  # This process's RSS and PSS in bytes, from smaps_rollup; nil values
  # where it cannot be read (kernels before 4.14, not Linux).
  def memory(path = SMAPS_ROLLUP)
    parse_rollup(File.read(path))
  rescue SystemCallError, IOError
    { "rss_bytes" => nil, "pss_bytes" => nil }
  end

  def parse_rollup(text)
    rss = text[/^Rss:\s+(\d+) kB/, 1]
    pss = text[/^Pss:\s+(\d+) kB/, 1]
    { "rss_bytes" => rss && rss.to_i * 1024, "pss_bytes" => pss && pss.to_i * 1024 }
  end

  # The counts document of one process from its two snapshots (pure).
  def counts(pid:, ppid:, role:, start:, finish:)
    {
      "pid" => pid, "ppid" => ppid, "role" => role,
      "started_at_s" => start[:at_s], "ended_at_s" => finish[:at_s], "duration_s" => finish[:at_s] - start[:at_s],
      "gc" => gc_delta(start, finish),
      "allocated_objects" => delta(start[:allocated], finish[:allocated]),
      "vm" => vm_delta(start[:vm] || {}, finish[:vm] || {}),
      "yjit" => finish[:yjit],
      "memory" => { "warmup_end" => start[:memory], "window_end" => finish[:memory] }
    }
  end

  def gc_delta(start, finish)
    before = start[:gc] || {}
    after = finish[:gc] || {}
    time_ns = delta(start[:gc_time_ns], finish[:gc_time_ns])
    { "count" => delta(before[:count], after[:count]), "minor" => delta(before[:minor_gc_count], after[:minor_gc_count]),
      "major" => delta(before[:major_gc_count], after[:major_gc_count]),
      "time_ms" => time_ns && time_ns / 1e6,
      "heap_live_slots" => after[:heap_live_slots], "heap_allocated_pages" => after[:heap_allocated_pages],
      "compact_count" => after[:compact_count] }
  end

  # Every key of both snapshots, its change (a key that appeared during
  # the window counts from 0).
  def vm_delta(before, after)
    result = {}
    after.each { |key, value| result[key.to_s] = value - before.fetch(key, 0) }
    result
  end

  def delta(before, after)
    before.is_a?(Integer) && after.is_a?(Integer) ? after - before : nil
  end

  # The window channel's listener: one per process. A child forked during
  # the window (a replaced worker) starts its own window when its watcher
  # sees window.start, replacing the snapshot it inherited.
  class Listener
    def window_started(_dir)
      @start = RackbenchInside.start_snapshot
    end

    def window_ended(dir)
      finish = RackbenchInside.end_snapshot
      return unless @start

      counts = RackbenchInside.counts(pid: Process.pid, ppid: Process.ppid, role: RackbenchWindow.role,
                                      start: @start, finish: finish)
      RackbenchInside.write(File.join(dir, "#{Process.pid}#{COUNTS_SUFFIX}"), counts)
    end
  end

  def write(path, data)
    RackbenchWholeFile.write(path, RackbenchPlainJson.generate(data), agent: "inside")
  end
end

RackbenchWindow.listen(RackbenchInside::Listener.new) if defined?(RackbenchWindow)
