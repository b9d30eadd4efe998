# frozen_string_literal: true

module Rackbench
  module Trial
    module Identity
      # Compares the reports of a trial's processes with its Expectation,
      # whoever collected them (Check for a live server, Finished for a
      # script that has ended): names each difference ("YJIT off, the
      # variant 'ruby-yjit' asks for it (--yjit)"), and builds the identity
      # record stored with the trial.
      class Comparison
        # :expectation :: an Expectation
        # :main_pid :: the trial's first process (the server's, the script's)
        def initialize(expectation:, main_pid:)
          @expected = expectation
          @main_pid = main_pid
        end

        # processes: [{pid:, report:, source:}], the main process among
        # them; others: processes recorded but not checked (helpers a server
        # exec'd). Returns the identity record (a Hash, JSON-ready); raises
        # IdentityMismatch naming the first difference and how many more,
        # with the record.
        def verify!(processes, others: [])
          @parents = processes.map { |process| process[:report]["ppid"] }
          mismatches = processes.flat_map { |process| differences(process) }
          unless mismatches.empty?
            more = mismatches.size > 1 ? " (and #{mismatches.size - 1} more)" : ""
            raise IdentityMismatch.new("identity check failed: #{mismatches.first}#{more}",
                                       record: record(processes, mismatches, others))
          end
          record(processes, [], others)
        end

        # LD_PRELOAD as the variant set it: valgrind puts its tool's
        # preloads (vgpreload_core-amd64-linux.so, ...) first in the
        # LD_PRELOAD of every process it runs, an instructions trial's
        # server among them; they are valgrind's, not the variant's. nil
        # when nothing else is left.
        def self.without_valgrind_preload(value)
          return value unless value.is_a?(String) && value.include?("vgpreload_")

          kept = value.split(/[\s:]+/).reject { |lib| lib.empty? || File.basename(lib).start_with?("vgpreload_") }
          kept.empty? ? nil : kept.join(" ")
        end

        private

        def differences(process)
          report = process[:report]
          who = process[:pid] == @main_pid ? "main process #{process[:pid]}" : "process #{process[:pid]}"
          [ruby_difference(report), jit_difference(report), *env_differences(report), gem_difference(report),
           *preload_differences(report), groups_difference(report), malloc_difference(process),
           compact_difference(process), *GemCheck.new(@expected).differences(report)]
            .compact.map { |text| "#{who}: #{text}" }
        end

        # The allocator mapped in the process (read by Check from
        # /proc/PID/maps when the server is alive, else the process's own
        # report) is the one the variant names or its command runs with.
        def malloc_difference(process)
          want = @expected.malloc
          got = malloc_of(process)
          return nil if want.nil? || got.nil? || got["name"] == want

          if want == "glibc"
            "runs #{got["name"]} (#{got["path"]} is mapped), the variant '#{@expected.label}' runs glibc's malloc"
          else
            "runs #{got["name"]} (no lib#{want} mapped), the variant '#{@expected.label}' asks for #{want}"
          end
        end

        def malloc_of(process)
          process[:maps_malloc] || process[:report]["malloc"]
        end

        # With gc_compact_before_fork, every worker (a forked process that
        # forked no reporting process itself: Puma's and Unicorn's workers)
        # was forked from a compacted heap: it reports a compaction count of
        # at least 1, inherited at its fork. Pitchfork's mold forks its
        # workers as siblings (their parent is the monitor), so it looks
        # like a worker too: it compacted its own heap after its fork, which
        # its late answer (at readiness) shows.
        def compact_difference(process)
          return nil unless @expected.gc_compact_before_fork
          return nil if process[:report]["event"] != "fork" || @parents.include?(process[:pid])

          count = [process[:report].dig("gc_compact", "count"), process.dig(:late, "gc_compact_count")]
                  .grep(Integer).max
          return nil if count && count >= 1

          "forked from a heap never compacted (GC.compact count #{count.inspect}), the server option " \
            "gc_compact_before_fork asks for a compaction before every fork"
        end

        def ruby_difference(report)
          if report["exe"] != @expected.exe
            return "ran #{report["exe"]}, the variant '#{@expected.label}' runs #{@expected.exe}"
          end
          if @expected.build && report["build"] != @expected.build
            return "ran #{report["build"] ? "the build #{report["build"]}" : "a ruby rackbench did not build"}, " \
                   "the variant '#{@expected.label}' is the build #{@expected.build}"
          end
          got = without_jit(report["description"])
          want = without_jit(@expected.description)
          return nil if got == want

          got, want = [got, want].map { |d| d.to_s.split(" (").first } unless short(got) == short(want)
          "ran #{got}, the variant '#{@expected.label}' is #{want}"
        end

        # RUBY_DESCRIPTION says "+YJIT" when the JIT is on: the JIT is
        # compared on its own (jit_difference), with a message about it.
        def without_jit(description)
          description.to_s.gsub(/ \+[YMR]JIT\b/, "")
        end

        # "ruby 3.1.2p20" out of a RUBY_DESCRIPTION.
        def short(description)
          description.to_s.split(" (").first
        end

        # A server's app may turn YJIT on itself (RubyVM::YJIT.enable, Ruby 3.3+).
        APP_YJIT_HINT = " (the app may turn it on itself: Rails 7.2+ does on Ruby 3.3+ unless config.yjit = false)"

        def jit_difference(report)
          got = report["jit"]
          want = @expected.jit
          return nil if got == want

          asks = @expected.options.empty? ? "" : " (#{@expected.options.join(" ")})"
          if want.nil?
            "#{got.upcase} on, the variant '#{@expected.label}' does not ask for a JIT#{asks}" \
              "#{APP_YJIT_HINT if got == "yjit" && @expected.server_gem}"
          elsif got.nil?
            "#{want.upcase} off, the variant '#{@expected.label}' asks for it#{asks}"
          else
            "#{got.upcase} on, the variant '#{@expected.label}' asks for #{want.upcase}#{asks}"
          end
        end

        def env_differences(report)
          seen = report["env"] || {}
          @expected.env.filter_map do |name, want|
            got = seen.fetch(name) { next "#{name} was not reported" }
            got = Comparison.without_valgrind_preload(got) if name == "LD_PRELOAD"
            next nil if got == want

            if want.nil? then "#{name}=#{got} is set, the trial leaves it unset"
            elsif got.nil? then "#{name} is unset, the trial sets #{want}"
            else "#{name}=#{got}, the trial sets #{want}"
            end
          end
        end

        def gem_difference(report)
          return nil unless @expected.server_gem

          got = report.dig("server_gem", "version")
          return nil if got == @expected.server_version
          return "the bundle does not activate #{@expected.server_gem}" if got.nil?

          "runs #{@expected.server_gem} #{got}, the bundle locks #{@expected.server_version}"
        end

        # The groups Bundler leaves out inside the server are the bundle's.
        def groups_difference(report)
          want = @expected.bundle_without
          return nil if want.nil?

          got = report["bundle_without"]
          return "Bundler is not loaded, the bundle leaves out #{groups(want)}" if got.nil?
          return nil if got.sort == want.sort

          "Bundler leaves out #{groups(got)}, the bundle leaves out #{groups(want)}"
        end

        def groups(names)
          names.empty? ? "no group" : "groups #{names.sort.join(", ")}"
        end

        def preload_differences(report)
          Array(report["preloaded"]).reject { |lib| lib["mapped"] }.map do |lib|
            "LD_PRELOAD names #{lib["name"]}, which is not loaded"
          end
        end

        def record(processes, mismatches, others)
          main = processes.find { |p| p[:pid] == @main_pid }&.fetch(:report) || {}
          pools = processes.filter_map { |p| p.dig(:late, "active_record_pool") }
          {
            "description" => main["description"], "engine" => main["engine"],
            "engine_version" => main["engine_version"], "exe" => main["exe"], "libruby" => main["libruby"],
            "build" => main["build"], "jit" => main["jit"], "env" => main["env"], "server_gem" => main["server_gem"]&.slice("name", "version"),
            "preloaded" => main["preloaded"], "bundle_without" => main["bundle_without"],
            "force_ruby_platform" => main["force_ruby_platform"],
            # The bundle's gems as the main process loaded them (name =>
            # version); nil for a trial without a bundle.
            "gems" => GemCheck.new(@expected).bundle_gems(main),
            # How the bundle's native gems the main process loaded were
            # built (name => "ruby" for compiled from source, else the
            # precompiled gem's platform); nil for a trial without a bundle.
            "gem_platforms" => GemCheck.new(@expected).bundle_gem_platforms(main),
            # The smallest ActiveRecord pool any process configured; nil when
            # none loaded ActiveRecord::Base (or none was asked).
            "active_record_pool" => pools.min,
            "malloc" => processes.find { |p| p[:pid] == @main_pid }&.then { |p| malloc_of(p) },
            "processes" => processes.map do |p|
              { "pid" => p[:pid], "ppid" => p[:report]["ppid"], "source" => p[:source],
                "event" => p[:report]["event"], "jit" => p[:report]["jit"],
                "active_record_pool" => p.dig(:late, "active_record_pool"),
                "malloc" => malloc_of(p), "preloaded" => p[:report]["preloaded"],
                "gc_compact_count" => p[:report].dig("gc_compact", "count"),
                "gc_compact_count_at_ready" => p.dig(:late, "gc_compact_count") }
            end,
            "others" => others, "expected" => @expected.to_h, "mismatches" => mismatches,
            "warnings" => warnings(pools)
          }
        end

        # A pool below the threads is legal (an app may use the database
        # from few requests) but makes threads wait for a connection, and
        # past the pool's checkout timeout fail: flagged, not failed.
        def warnings(pools)
          threads = @expected.threads
          pool = pools.min
          return [] unless threads && pool && pool < threads

          ["ActiveRecord's pool is #{pool} connection#{"s" unless pool == 1}, below the #{threads} threads per " \
           "process: threads wait for a connection (set the pool from RAILS_MAX_THREADS in config/database.yml)"]
        end
      end
    end
  end
end
