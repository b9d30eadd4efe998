# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      module Companions
        # The kernel's pressure stall information over the window
        # (/proc/pressure/{cpu,memory,io}, Linux 4.20+ with PSI on): the
        # share of the window in which some task of the machine waited for
        # a CPU, for memory or for I/O ("some"), and in which every
        # non-idle task did ("full"). It is the machine's own measure of
        # contention: a trial whose CPU "some" share is high measured a
        # server that queued behind other work, whoever caused it (the
        # machine's load names the processes, this says how long anything
        # waited). Stored as the record's +pressure+:
        #
        #   { "window_s" => 2.0,
        #     "cpu" => { "some_pct" => 12.5, "full_pct" => nil },
        #     "memory" => { "some_pct" => 0.0, "full_pct" => 0.0 }, "io" => {...} }
        #
        # A kernel without PSI (or a file that cannot be read) leaves the
        # resource out; nothing at all leaves the record's pressure nil.
        class Pressure < Companion
          # With the machine's load: a sample beside the server's.
          ORDER = 35
          RESOURCES = %w[cpu memory io].freeze

          # :dir :: where the kernel's pressure files are (default: /proc/pressure; tests pass their own)
          def initialize(setup, dir: "/proc/pressure")
            super(setup)
            @dir = dir
          end

          def part(_scene)
            Part.new(@dir)
          end

          # The cumulative stall totals of each resource: { "cpu" => { "some"
          # => µs, "full" => µs }, ... }, resources that cannot be read left
          # out. CPU's "full" line exists since Linux 5.13, and says 0 at
          # the system level: it is kept as the kernel gives it.
          def self.totals(dir)
            RESOURCES.each_with_object({}) do |resource, totals|
              text = File.read(File.join(dir, resource))
              lines = text.lines.to_h { |line| [line[/\A(some|full) /, 1], line[/total=(\d+)/, 1]&.to_i] }
              kinds = lines.slice("some", "full").compact
              totals[resource] = kinds unless kinds.empty?
            rescue SystemCallError
              next
            end
          end

          # The stall shares, in percent of +window_s+, between two readings
          # of #totals; nil when no resource was read at both ends.
          def self.shares(before, after, window_s)
            return nil unless window_s.positive?

            resources = (before.keys & after.keys).to_h do |resource|
              shares = %w[some full].to_h do |kind|
                was = before[resource][kind]
                now = after[resource][kind]
                [kind == "some" ? "some_pct" : "full_pct",
                 was && now && now >= was ? ((now - was) / (window_s * 1e6) * 100).round(3) : nil]
              end
              [resource, shares]
            end
            resources.empty? ? nil : { "window_s" => window_s.round(4), **resources }
          end

          # One trial's readings at the window's edges.
          class Part < Companion::Part
            def initialize(dir)
              super()
              @dir = dir
            end

            def window_started
              @started_s = Process.clock_gettime(Process::CLOCK_MONOTONIC)
              @before = Pressure.totals(@dir)
            end

            def window_ended
              return unless @before

              after = Pressure.totals(@dir)
              @shares = Pressure.shares(@before, after, Process.clock_gettime(Process::CLOCK_MONOTONIC) - @started_s)
            end

            def keep(facts)
              facts[:pressure] = @shares
            end
          end
        end

        Http.companion :pressure, Pressure
      end
    end
  end
end
