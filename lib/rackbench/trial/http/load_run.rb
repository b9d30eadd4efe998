# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # The measured part of a trial: the load engine's warmup and window
      # against a booted server, the trial's companions' parts told of the
      # window's edges as the engine reaches them (the samplers' windows are
      # exactly the engine's), then the verdict.
      class LoadRun
        # :trial, :app (an App), :server (a ServerProcess), :engine (a LoadEngine)
        # :layout :: the CpuLayout (the engine's CPUs)
        # :seed :: the experiment's seed (the request mix uses seed + batch)
        # :max_error_rate :: above it the trial fails
        # :marker_env :: the run's marker for the engine's process (Watchdog)
        # :calibrations :: fetch(config, settings) => Calibration::Result, for a configuration whose
        #                  timeout is left to calibration (a Calibration::Cache)
        # :parts :: the trial's Companions::Parts: where the load goes (a proxy's port), the engine's
        #           settings left open, the window's edges in their order, what the record keeps of the
        #           window, and why the measurement cannot count (default: none)
        # :work_dir :: the trial's directory, where the request list with its session probe goes
        #              (RequestList.for_trial); nil gives the engine the list as it is (default: nil)
        # :tls :: the Tls::Certificate of a load.tls trial's server (default: nil)
        def initialize(trial:, app:, server:, engine:, layout:, seed:, max_error_rate:, marker_env:, calibrations:,
                       parts: Companions::Parts.new([]), work_dir: nil, tls: nil)
          @trial = trial
          @app = app
          @server = server
          @engine = engine
          @layout = layout
          @seed = seed
          @max_error_rate = max_error_rate
          @marker_env = marker_env
          @calibrations = calibrations
          @parts = parts
          @work_dir = work_dir
          @tls = tls
          @edges = WindowEdges.new(parts)
        end

        # The engine's settings for trial (an Experiment::Plan::Trial) of
        # app against a server on port: the configuration's load (a timeout
        # left to calibration keeps the engine's default here), its request
        # list and cookie jar, the engine's CPUs, the batch's seed. With a
        # work_dir, a list whose app names its logged-in text gets the
        # session probe every slot sends (RequestList.for_trial). With
        # load.tls (tls: the server's Tls::Certificate) the URL is https://
        # and the engine checks the certificate against the run's authority.
        #
        # A think time left to auto (load.think null) is none, a warmup of
        # a fixed count left to auto is a timed warmup, and the request
        # mix's seed is the batch's, unless one of +parts+
        # (Companions::Parts) sets them (an instructions trial's); a part
        # may add an engine setting of its own (an instructions trial's
        # gate).
        #
        # :host :: the server's address (default: Servers::HOST; a load
        #          host's trial: the address it reaches the server at)
        def self.settings(trial:, app:, port:, layout:, seed:, work_dir: nil, host: Servers::HOST, tls: nil,
                          parts: Companions::Parts.new([]))
          config = trial.config
          list = requests(config, app)
          if work_dir && list[:requests_file]
            list[:requests_file] = RequestList.for_trial(list[:requests_file], dir: work_dir, probe_path: app.load_path,
                                                                               probe_body: app.expect_session_body)
          end
          open = parts.engine_settings(think_s: config.load[:think_s], warmup_count: config.load[:warmup_count],
                                       seed: seed + trial.batch)
          LoadSettings.build(url: "#{tls ? "https" : "http"}://#{host}:#{port}#{app.load_path}",
                             **config.load.except(:cookies, :host, :tls, :think_s, :warmup_count,
                                                 *Experiment::WebSocketLoad::OPTIONS), **list,
                             ca_file: tls&.ca_path, cpus: layout.engine_cpus, **open, think_s: open[:think_s] || 0.0)
        end

        # The request list, if any, and the cookie jar. A list given in the
        # experiment file (load.requests) wins over the app's own (the mix
        # variant of rails-posts). A list keeps cookies per connection unless
        # load.cookies says false, as a browser would: a session that logs in
        # first must stay logged in. A single URL gets no jar unless asked,
        # or unless load.preset_cookies puts cookies in it. h2c runs have no
        # jar (the engine has none for HTTP/2 yet).
        def self.requests(config, app)
          file = config.load[:requests_file] || app.requests
          cookies = config.load[:cookies]
          presets = config.load[:cookie_presets] || []
          # HTTP/2 has no cookie jar yet: a list runs without one there.
          default = (!file.nil? || !presets.empty?) && !LoadSettings::HTTP2.include?(config.load[:protocol])
          { requests_file: file, cookies: cookies.nil? ? default : cookies }
        end

        private_class_method :requests

        # What +trial+ measures (Instructions::MEASURES; a plan trial
        # without a measure: time): a calibration, a trial's directory and
        # its log are kept apart by it.
        def self.measure_of(trial)
          trial.respond_to?(:measure) && trial.measure ? trial.measure : Instructions::TIME
        end

        # Measures; returns the record's fields of the measurement: result
        # (the engine's document), load_settings, status and reason, and
        # what the parts keep of the window (the server's sample, the
        # machine's). What the parts keep also goes into facts (the record's
        # known fields) as soon as the window ends: an engine that fails
        # after its window keeps what was sampled.
        def run(facts = {})
          settings, calibration = calibrated(settings())
          facts[:load_settings] = @parts.record_settings(settings.to_h.transform_keys(&:to_s)
                                                                  .merge("calibration" => calibration&.to_h))
          kept = {}
          result = begin
            @engine.run(settings, env: @marker_env, on_phase: @edges.method(:on_phase))
          ensure
            @edges.end! # a run that ended inside its window (an error, an interrupt) ends it here
            @parts.call(:keep, kept)
            facts.merge!(kept)
          end
          { result: result.to_h, **kept, load_settings: facts[:load_settings], **verdict(result) }
        end

        private

        # The settings with the timeout the calibration chose, and the
        # calibration (nil when the experiment set the timeout itself: an
        # explicit setting always wins). The calibration has run on a server
        # of its own before this one booted (Http#calibrate_first); measured here
        # only when called without it.
        def calibrated(settings)
          return [settings, nil] unless @trial.config.load[:timeout_s].nil?

          calibration = @calibrations.fetch(@trial.config, settings, trial_measure: LoadRun.measure_of(@trial))
          [LoadSettings.build(**settings.to_h, timeout_s: calibration.timeout_s), calibration]
        end

        # The load goes to the port a part puts in front of the server (a
        # proxy's), or to the server's.
        def settings
          self.class.settings(trial: @trial, app: @app, port: @parts.target_port || @server.port, layout: @layout,
                              seed: @seed, work_dir: @work_dir, host: @server.host, tls: @tls, parts: @parts)
        end

        # ok, or failed with the reason.
        def verdict(result)
          return { status: "failed", reason: @server.failure("during the measurement") } unless @server.alive?
          # A part's process that died (the proxy, a service).
          if (beside = @parts.failure("during the measurement"))
            return { status: "failed", reason: beside }
          end
          # A server that answers, but not in HTTP/2: the trial measured
          # nothing of what it names, whatever else was counted.
          if (not_h2c = result.not_h2c_reason)
            return { status: "failed", reason: "server did not speak HTTP/2 (h2c prior knowledge): #{not_h2c}" }
          end
          # A slot that lost its session browsed anonymously: the window
          # measured other pages than the ones named.
          if (lost = RequestList.lost_sessions(result.probes))
            return { status: "failed", reason: lost }
          end
          if result.requests.zero?
            # Every connection failed its TLS: the reason is TLS's, not the count's.
            return { status: "failed", reason: "TLS failed: #{result.tls_reason}" } if result.tls_reason

            return { status: "failed",
                     reason: "no response in the measured window (errors: #{result.errors})#{timeout_hint(result)}" }
          end

          rate = result.failure_rate
          return { status: "ok" } if rate <= @max_error_rate

          { status: "failed",
            reason: format("error rate %.2f%% above %.2f%% (%s)%s", rate * 100, @max_error_rate * 100, failures(result),
                           timeout_hint(result)) }
        end

        # What to change when requests were lost to the timeout: the usual
        # cause is more connections queued than the app answers in time.
        def timeout_hint(result)
          lost = result.errors.fetch("timeout", 0)
          return "" unless lost.positive?

          settings = result.settings
          format("; %d requests got no response within the %s timeout at %s connections: raise load.timeout or " \
                 "lower load.connections", lost, Units.seconds(settings["timeout_s"], digits: 1), settings["connections"])
        end

        # Failed requests by kind: the engine's transport errors, and
        # responses whose status is not 2xx or 3xx by status ("500" => 12):
        # a server answering 500 fast is not a result either.
        def failures(result)
          statuses = result.status.reject { |code, _| code.to_i.between?(200, 399) }
          counts = result.errors.select { |_, n| n.positive? }.merge(statuses.select { |_, n| n.positive? })
          counts.merge(h2_failures(result.h2)).merge(tls_failures(result))
        end

        # A TLS failure's kinds and first reason beside the counts.
        def tls_failures(result)
          return {} unless result.tls_reason

          { "tls failures" => result.tls["failures"].select { |_, n| n.positive? }, "tls reason" => result.tls_reason }
        end

        # HTTP/2 (h2c): the codes of the streams the server reset and of its
        # GOAWAYs, and the first connection error's reason, where there are.
        def h2_failures(h2)
          return {} unless h2

          { "reset codes" => h2["resets"], "goaway codes" => h2["goaway_codes"] }.reject { |_, v| v.to_h.empty? }
            .merge(h2["protocol_errors"].to_i.positive? ? { "h2 error" => h2["reason"] } : {})
        end
      end
    end
  end
end
