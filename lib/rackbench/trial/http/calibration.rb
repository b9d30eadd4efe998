# frozen_string_literal: true

require "digest"
require "fileutils"
require "json"
require "time"

module Rackbench
  module Trial
    class Http < Kind
      # Load that fits the app: before a configuration's first trial, a
      # short closed-loop run of the trial's own load (its connections, its
      # request list, its cookies) measures how slow the app's responses
      # are under it, and the timeout of every trial of that configuration
      # follows from it. A 2 s timeout is generous for a "hello world" and
      # fails every request of a 75 ms page queued behind 15 others on one
      # CPU; a timeout that is a fixed multiple of what the app really takes
      # fits both. See doc/methodology.md ("Load that fits the app").
      #
      # Only a timeout the experiment leaves unset (load.timeout: auto) is
      # calibrated: explicit settings always win. The connection count is
      # not: every configuration of an experiment gets the same client
      # (Experiment::Settings#default_connections, two per server thread of
      # the largest configuration), so that their figures compare.
      #
      # It runs on a server of its own, booted before the configuration's
      # first trial and stopped (Http#calibrate_first), so that every batch
      # measures the same thing. The result is kept in the results
      # directory, so all batches of a configuration, also those of a
      # --resume, use the same load.
      class Calibration
        # A response this many times slower than the slowest one measured
        # at calibration counts as lost. Ten times leaves room for a GC
        # pause or a slow page the short calibration window did not draw
        # from the mix, while a server that has really hung is still
        # detected within seconds to minutes, not hours.
        TIMEOUT_FACTOR = 10
        # Never below the engine's own default: fast apps keep today's limit.
        MIN_TIMEOUT_S = 2.0
        # How long the calibration waits for one response: an app slower
        # than this under the trial's load cannot be measured with it.
        CEILING_S = 120.0
        # A fast app answers thousands of requests in the first window, and
        # its timeout is the 2 s floor anyway; a slow one gets a second,
        # longer window (below). Short, because every configuration pays it.
        WARMUP_S = 0.25
        WINDOW_S = 0.75
        # A window that saw too few responses is followed by one at most
        # this long.
        MAX_WINDOW_S = 60.0
        # Responses per connection the calibration wants to see.
        ROUNDS = 2

        # What the calibration measured, and the timeout it chose.
        Result = Struct.new(:connections, :requests, :latency_p50_us, :latency_p99_us, :latency_max_us, :rps,
                            :timeout_s, :measured_at, keyword_init: true) do
          def to_h = super.transform_keys(&:to_s)

          def self.from_h(hash) = new(**hash.transform_keys(&:to_sym).slice(*members))

          # "slowest 812.00ms at 16 connections (p50 95.00ms): timeout 8.1s"
          def summary
            format("slowest %s at %d connections (p50 %s): timeout %s", Units.latency_us(latency_max_us),
                   connections, Units.latency_us(latency_p50_us), Units.seconds(timeout_s, digits: 1))
          end
        end

        # The timeout for a calibration whose slowest response took
        # latency_max_us: TIMEOUT_FACTOR times it, at least MIN_TIMEOUT_S,
        # rounded up to a tenth of a second.
        def self.timeout_for(latency_max_us)
          raw_s = TIMEOUT_FACTOR * latency_max_us / 1_000_000.0
          [MIN_TIMEOUT_S, (raw_s * 10).ceil / 10.0].max
        end

        # :engine :: runs LoadSettings, returns a LoadResult (a LoadEngine)
        # :marker_env :: the run's marker for the engine's process (Watchdog)
        def initialize(engine:, marker_env: {})
          @engine = engine
          @marker_env = marker_env
        end

        # Measures with settings (the trial's LoadSettings, whose warmup,
        # duration, rate and timeout are replaced); returns a Result or
        # raises SetupError naming what to change.
        #
        # The slowest response under a closed loop of C connections waits
        # behind the other C - 1: a window that has seen every connection
        # answered twice has seen the queue at its full length. A fast app
        # gets there in a fraction of the first window; a slow one (150 ms
        # pages, 16 connections: one round takes 2.4 s) gets a second,
        # longer window sized from the first one's rate.
        def measure(settings)
          result = run(settings, warmup_s: WARMUP_S, window_s: WINDOW_S)
          wanted = ROUNDS * settings.connections
          if result.requests < wanted
            window_s = second_window_s(result, wanted)
            result = run(settings, warmup_s: 0.0, window_s: window_s)
          end
          check!(result, settings)
          latency = result.latency_us
          Result.new(connections: settings.connections, requests: result.requests, latency_p50_us: latency["p50"],
                     latency_p99_us: latency["p99"], latency_max_us: latency["max"], rps: result.rps,
                     timeout_s: self.class.timeout_for(latency["max"]), measured_at: Time.now.utc.iso8601)
        end

        private

        def run(settings, warmup_s:, window_s:)
          # A timed window even for a trial of a fixed count: the calibration
          # sizes its window from the rate it sees.
          calibration = settings.to_h.merge(warmup_s: warmup_s, duration_s: window_s, rate: nil, timeout_s: CEILING_S,
                                            raw_file: nil, count: nil, warmup_count: nil)
          @engine.run(LoadSettings.build(**calibration), env: @marker_env)
        end

        # Long enough for the wanted responses at the rate the first run
        # saw (its warmup and window), with a margin; the longest window
        # when it saw none at all.
        def second_window_s(result, wanted)
          answered = result.requests + result.warmup.fetch("requests", 0)
          return MAX_WINDOW_S if answered.zero?

          rate = answered / (WARMUP_S + WINDOW_S)
          (1.5 * wanted / rate).clamp(WINDOW_S, MAX_WINDOW_S)
        end

        def check!(result, settings)
          lost = result.errors.fetch("timeout", 0)
          if result.requests.zero?
            errors = result.errors.select { |_, n| n.positive? }
            # Only a load that nothing answered in time is too much for the
            # app; connection or protocol errors are another failure.
            advice = (errors.keys - ["timeout"]).empty? ? "the app is too slow for this load: lower load.connections" \
                                                         : "the server does not answer this load"
            raise SetupError, "calibration: no response within #{result.duration_s.round} s at " \
                              "#{settings.connections} connections (#{errors.empty? ? "no error either" : "errors: #{errors}"}); " \
                              "#{advice}"
          end
          return unless lost.positive?

          raise SetupError, "calibration: #{lost} responses took over #{CEILING_S.round} s at " \
                            "#{settings.connections} connections; lower load.connections or set load.timeout"
        end

        # The calibrations of one run: each configuration is measured once
        # (the first time one of its trials asks), then served from memory or
        # from the results directory.
        class Cache
          # :results_dir :: where the calibrations are kept (see Store)
          # :fingerprint :: the experiment's: a results directory may hold
          #                 several experiments whose configurations have the
          #                 same dimensions but another load
          # :calibration :: a Calibration (measures)
          # :log :: where each new calibration is described, with what it
          #         measured (default: none; a run's progress line names the
          #         timeout instead, Http::Reading#summary)
          def initialize(results_dir:, fingerprint:, calibration:, log: nil)
            @store = Store.new(results_dir)
            @fingerprint = fingerprint
            @calibration = calibration
            @log = log
            @results = {}
          end

          # The Result of config (its key and label), measured with settings
          # unless known; raises SetupError when it cannot be measured.
          # :trial_measure :: what the trial measures: an instructions
          #                   trial's server runs under valgrind, far
          #                   slower, and has a calibration of its own
          #                   (default: time)
          def fetch(config, settings, trial_measure: Instructions::TIME)
            key = key(config, trial_measure)
            @results[key] ||= stored(key, settings.connections) || measure(key, config, settings)
          end

          # Whether config's calibration is known (in memory or stored).
          def known?(config, trial_measure: Instructions::TIME)
            key = key(config, trial_measure)
            !(@results[key] ||= stored(key, config.load[:connections])).nil?
          end

          private

          # A time trial's key is the one stored before instructions existed.
          def key(config, trial_measure)
            base = "#{@fingerprint} #{config.key}"
            trial_measure == Instructions::TIME ? base : "#{base} #{trial_measure}"
          end

          # A stored result measured with the same connections (a guard: the
          # key already names the experiment and the configuration).
          def stored(key, connections)
            result = @store.fetch(key)
            result if result && result.connections == connections
          end

          def measure(key, config, settings)
            result = @calibration.measure(settings)
            @store.save(key, result)
            @log&.puts "calibrated #{config}: #{result.summary}"
            result
          end
        end

        # Calibrations of one results directory, one file per configuration
        # (calibration/<digest of its key>.json), so that a resumed run
        # gives the remaining batches the load the first ones had.
        class Store
          def initialize(results_dir)
            @dir = File.join(results_dir, "calibration")
          end

          # The stored Result of the configuration key, or nil.
          def fetch(config_key)
            path = path(config_key)
            return nil unless File.exist?(path)

            Result.from_h(JSON.parse(File.read(path)).fetch("result"))
          rescue JSON::ParserError, KeyError, ArgumentError
            nil # a damaged file is measured again
          end

          def save(config_key, result)
            FileUtils.mkdir_p(@dir)
            path = path(config_key)
            # Written whole, then renamed: a kill -9 leaves the old file or
            # the new one, never half of one.
            File.write("#{path}.tmp", JSON.pretty_generate("config" => config_key, "result" => result.to_h))
            File.rename("#{path}.tmp", path)
          end

          private

          def path(config_key)
            File.join(@dir, "#{Digest::SHA256.hexdigest(config_key)[0, 16]}.json")
          end
        end
      end
    end
  end
end
