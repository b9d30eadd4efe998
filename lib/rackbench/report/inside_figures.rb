# frozen_string_literal: true

module Rackbench
  class Report
    # The derived "inside the server" figures of one trial (issue 12's
    # shared design, doc/methodology.md "Inside the server"), from the
    # record's +inside+ document (the counting agent's per-process window
    # deltas) and its +sample+ (the sampler's CPU time):
    #
    # cpu_us_per_request :: (sample cpu_user_s + cpu_system_s) * 1e6 / window requests
    # allocations_per_request :: Σ allocated_objects / window requests
    # gc_per_1k_requests :: 1000 * Σ gc.count / window requests
    # gc_ms_per_1k_requests :: 1000 * Σ gc.time_ms / window requests (nil
    #                          when a process's ruby does not measure GC time)
    # major_gc_per_1k_requests :: 1000 * Σ gc.major / window requests
    # worker_pss_bytes :: mean window-end PSS of the workers ("single"
    #                     processes when none forked)
    # worker_pss_growth_bytes :: mean of their window-end minus warmup-end PSS
    # total_pss_bytes :: window-end PSS summed over the whole tree
    # yjit_code_bytes :: mean YJIT code size of the workers running YJIT
    # yjit_ratio :: mean ratio_in_yjit where --yjit-stats measured it
    # constant_invalidations_per_1k_requests :: 1000 * Σ RubyVM.stat's
    #     constant_cache_invalidations (global_constant_state before 3.2:
    #     each bump invalidates every constant cache) / window requests
    # class_serial_per_1k_requests :: 1000 * Σ RubyVM.stat's class_serial
    #     (a class or singleton class created, a method defined or
    #     removed: method caches go stale) / window requests
    # In a warmed-up app both should be about 0: an app that defines
    # constants, extends objects or creates classes while serving requests
    # throws away the caches the interpreter and the JIT build.
    # cpu_stall_pct, memory_stall_pct, io_stall_pct :: the share of the
    #     window (percent) in which some task of the machine waited for a
    #     CPU, memory or I/O, from the record's +pressure+ (the kernel's
    #     PSI, Trial::Http::Companions::Pressure): not the server's own
    #     figure but what it was measured in; high CPU stall beside a low
    #     rate says the server queued behind other work
    #
    # where Σ sums each process's delta between its two snapshots and the
    # window requests are the engine's responses in its window. Why not
    # rates per process (Σ X_i / duration_s_i over the engine's rate), which
    # would correct a snapshot taken late at one edge only: the watcher
    # wakes on a pipe at each edge (agent/window.rb), so a snapshot is late
    # mostly when the whole server is stalled, and then the stall holds no
    # requests either; the rate turns those missing seconds into a shorter
    # window and overstates. Measured here: a run whose workers stalled for
    # the first second of a 4 s window gave major GCs per request 39% too
    # high by rates, exact by deltas (doc/methodology.md).
    #
    # Every figure is nil when it cannot be computed honestly: no inside
    # document (old stores, agent off, script trials), a process without
    # the value or without a positive duration, no requests.
    module InsideFigures
      # Every figure's name, in the order the reports show them.
      NAMES = %w[cpu_us_per_request allocations_per_request gc_per_1k_requests gc_ms_per_1k_requests
                 major_gc_per_1k_requests worker_pss_bytes worker_pss_growth_bytes total_pss_bytes
                 yjit_code_bytes yjit_ratio constant_invalidations_per_1k_requests
                 class_serial_per_1k_requests cpu_stall_pct memory_stall_pct io_stall_pct].freeze
      # RubyVM.stat's counter of constant cache invalidations, by ruby
      # generation (3.2+ first).
      CONSTANT_INVALIDATION_KEYS = %w[constant_cache_invalidations global_constant_state].freeze

      module_function

      # The figures of +record+ (a Trial::Record or anything answering
      # inside, cpu_user_s, cpu_system_s and requests): a Hash of NAMES to
      # Numeric or nil, or nil when every figure is nil.
      def of(record)
        compute(record.inside, cpu_user_s: record.cpu_user_s, cpu_system_s: record.cpu_system_s, requests: record.requests,
                               pressure: record.respond_to?(:pressure) ? record.pressure : nil)
      end

      # The figures from an +inside+ document (or nil) and the sampler's
      # CPU seconds. The window's requests are the inside document's; without
      # one, +requests+ (the engine's responses in the same window).
      def compute(inside, cpu_user_s:, cpu_system_s:, requests:, pressure: nil)
        inside = nil unless inside.is_a?(Hash)
        window_requests = inside ? inside.dig("window", "requests") : requests
        figures = {
          "cpu_us_per_request" => cpu_us_per_request(cpu_user_s, cpu_system_s, window_requests),
          "allocations_per_request" => per_request(inside, 1) { |p| p["allocated_objects"] },
          "gc_per_1k_requests" => per_request(inside, 1000) { |p| p.dig("gc", "count") },
          "gc_ms_per_1k_requests" => per_request(inside, 1000) { |p| p.dig("gc", "time_ms") },
          "major_gc_per_1k_requests" => per_request(inside, 1000) { |p| p.dig("gc", "major") },
          "worker_pss_bytes" => mean(serving(inside)) { |p| pss(p, "window_end") },
          "worker_pss_growth_bytes" => mean(serving(inside)) { |p| growth(p) },
          "total_pss_bytes" => total_pss(inside),
          "yjit_code_bytes" => mean(serving(inside).select { |p| p["yjit"].is_a?(Hash) }) { |p| yjit_code(p) },
          "yjit_ratio" => mean(serving(inside).select { |p| p.dig("yjit", "ratio_in_yjit") }) do |p|
            p["yjit"]["ratio_in_yjit"]
          end,
          "constant_invalidations_per_1k_requests" => per_request(inside, 1000) { |p| constant_invalidations(p) },
          "class_serial_per_1k_requests" => per_request(inside, 1000) { |p| p.dig("vm", "class_serial") },
          **%w[cpu memory io].to_h { |resource| ["#{resource}_stall_pct", stall_pct(pressure, resource)] }
        }
        figures.values.all?(&:nil?) ? nil : figures
      end

      # Per process of +inside+ (nil without one): [{"pid", "role",
      # "warmup_end_pss_bytes", "window_end_pss_bytes"}], for the memory
      # chart. Processes without a memory snapshot are left out.
      def memory_points(inside)
        return [] unless inside.is_a?(Hash)

        processes(inside).filter_map do |p|
          before = pss(p, "warmup_end")
          after = pss(p, "window_end")
          next unless before || after

          { "pid" => p["pid"], "role" => p["role"], "warmup_end_pss_bytes" => before, "window_end_pss_bytes" => after }
        end
      end

      # The "some" share of the window +resource+ stalled, from a record's
      # pressure document; nil without one.
      def stall_pct(pressure, resource)
        value = pressure.is_a?(Hash) ? pressure.dig(resource, "some_pct") : nil
        value.is_a?(Numeric) ? value : nil
      end

      def cpu_us_per_request(user_s, system_s, requests)
        return nil unless user_s.is_a?(Numeric) && system_s.is_a?(Numeric) && requests.is_a?(Numeric) && requests.positive?

        (user_s + system_s) * 1e6 / requests
      end

      # scale * Σ value / the window's requests, or nil when the window
      # has no requests or a process lacks the value or a positive
      # duration (a partial sum would pass for the whole tree's; a process
      # without a window measured nothing).
      def per_request(inside, scale)
        requests = inside&.dig("window", "requests")
        return nil unless requests.is_a?(Numeric) && requests.positive?

        list = processes(inside)
        return nil if list.empty?

        total = 0.0
        list.each do |p|
          value = yield(p)
          duration_s = p["duration_s"]
          return nil unless value.is_a?(Numeric) && duration_s.is_a?(Numeric) && duration_s.positive?

          total += value
        end
        scale * total / requests
      end

      def processes(inside)
        list = inside && inside["processes"]
        list.is_a?(Array) ? list.select { |p| p.is_a?(Hash) } : []
      end

      # The processes that serve requests: the workers, or the "single"
      # processes of a server that forked none.
      def serving(inside)
        list = processes(inside)
        workers = list.select { |p| p["role"] == "worker" }
        workers.empty? ? list.select { |p| p["role"] == "single" } : workers
      end

      # The mean of the block's values over +list+; nil when the list is
      # empty or a value is missing.
      def mean(list)
        return nil if list.empty?

        values = list.map { |p| yield(p) }
        return nil unless values.all?(Numeric)

        values.sum.to_f / values.size
      end

      def pss(process, snapshot)
        value = process.dig("memory", snapshot, "pss_bytes")
        value.is_a?(Numeric) ? value : nil
      end

      def growth(process)
        before = pss(process, "warmup_end")
        after = pss(process, "window_end")
        before && after ? after - before : nil
      end

      def total_pss(inside)
        list = processes(inside)
        return nil if list.empty?

        values = list.map { |p| pss(p, "window_end") }
        values.all?(Numeric) ? values.sum : nil
      end

      # The process's constant cache invalidations over the window, under
      # the name its ruby gives them; nil where RubyVM.stat has neither.
      def constant_invalidations(process)
        vm = process["vm"]
        return nil unless vm.is_a?(Hash)

        CONSTANT_INVALIDATION_KEYS.each { |key| return vm[key] if vm[key].is_a?(Numeric) }
        nil
      end

      # Generated code: code_region_size (Ruby 3.2+), else the inline and
      # outlined blocks of Ruby 3.1.
      def yjit_code(process)
        stats = process["yjit"]
        return stats["code_region_size"] if stats["code_region_size"].is_a?(Numeric)

        inline = stats["inline_code_size"]
        outlined = stats["outlined_code_size"]
        inline.is_a?(Numeric) && outlined.is_a?(Numeric) ? inline + outlined : nil
      end
      private_class_method :cpu_us_per_request, :per_request, :constant_invalidations, :processes, :serving, :mean, :pss,
                           :growth, :total_pss, :yjit_code
    end
  end
end
