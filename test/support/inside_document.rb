# frozen_string_literal: true

# Inside documents (the record field "inside", issue 12's shared shape) for
# the report tests, with figures that are easy to compute by hand.
module InsideDocument
  MB = 1_000_000

  module_function

  # One process of the document. Keyword options override the defaults.
  def process(pid:, role:, duration_s: 10.0, allocated: 0, gc_count: 0, minor: nil, major: 0, time_ms: 0.0,
              warmup_pss: 50 * MB, window_pss: 50 * MB, yjit: nil)
    {
      "pid" => pid, "ppid" => 1, "role" => role, "started_at_s" => 100.0, "ended_at_s" => 100.0 + duration_s,
      "duration_s" => duration_s,
      "gc" => { "count" => gc_count, "minor" => minor || gc_count - major, "major" => major, "time_ms" => time_ms,
                "heap_live_slots" => 100_000, "heap_allocated_pages" => 300, "compact_count" => nil },
      "allocated_objects" => allocated, "vm" => { "constant_cache_invalidations" => 0 }, "yjit" => yjit,
      "memory" => { "warmup_end" => { "rss_bytes" => warmup_pss + MB, "pss_bytes" => warmup_pss },
                    "window_end" => { "rss_bytes" => window_pss + MB, "pss_bytes" => window_pss } }
    }
  end

  # The whole document: the engine's window and the processes.
  def document(processes, requests: 10_000, duration_s: 10.0, missing: [])
    { "agent" => "counting", "window" => { "requests" => requests, "duration_s" => duration_s },
      "processes" => processes, "missing" => missing }
  end

  # A forking server whose second worker saw a window 2 s shorter than the
  # engine's 10 s (its watcher woke late), with figures computed by hand in
  # inside_figures_test.rb.
  def forked
    document([
               process(pid: 10, role: "master", allocated: 1000, warmup_pss: 30 * MB, window_pss: 31 * MB),
               process(pid: 11, role: "worker", allocated: 500_000, gc_count: 20, major: 2, time_ms: 100.0,
                       warmup_pss: 50 * MB, window_pss: 60 * MB,
                       yjit: { "enabled" => true, "code_region_size" => 4_000_000, "ratio_in_yjit" => 0.9 }),
               process(pid: 12, role: "worker", duration_s: 8.0, allocated: 400_000, gc_count: 16, major: 1,
                       time_ms: 80.0, warmup_pss: 52 * MB, window_pss: 58 * MB,
                       yjit: { "enabled" => true, "inline_code_size" => 2_000_000, "outlined_code_size" => 1_000_000,
                               "ratio_in_yjit" => nil })
             ])
  end
end
