# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # The measured part of a trial: the load engine's warmup and window
      # against a booted server, the server's process tree sampled over
      # exactly the window (the engine says when it starts and ends) along
      # with what else the machine did, then the verdict.
      class LoadRun
        # :trial, :app (an App), :server (a ServerProcess), :engine (a LoadEngine)
        # :layout :: the CpuLayout (the engine's CPUs)
        # :seed :: the experiment's seed (the request mix uses seed + batch)
        # :max_error_rate :: above it the trial fails
        # :marker_env :: the run's marker for the engine's process (Watchdog)
        # :sampler :: samples the server (#start, #stop => summary Hash), e.g. a Sampler
        # :machine :: samples the rest of the machine (#start, #stop => Hash), e.g. a MachineLoad
        # :calibrations :: fetch(config, settings) => Calibration::Result, for a configuration whose
        #                  timeout is left to calibration (a Calibration::Cache)
        # :window :: marks the window for the server's processes (#mark(:start), #mark(:end)), e.g. a
        #            WindowMarks; nil marks nothing (default: nil)
        # :proxy :: the proxy in front of the server (a Proxy::Running): the engine targets its port, and
        #           its #start / #stop follow the window's edges with the server's sampler (default: nil)
        # :services :: the app's services (a Services::Group): their #start / #stop follow the window's
        #              edges with the server's sampler, and a service that ended fails the trial (default: nil)
        # :work_dir :: the trial's directory, where the request list with its session probe goes
        #              (RequestList.for_trial); nil gives the engine the list as it is (default: nil)
        # :tls :: the Tls::Certificate of a load.tls trial's server (default: nil)
        # :edges :: what else follows the window's edges (#started, #ended; an instructions trial's
        #           Instructions::Edges), first at each: a fixed count's engine waits for it (default: nil)
        def initialize(trial:, app:, server:, engine:, layout:, seed:, max_error_rate:, marker_env:, sampler:, machine:,
                       calibrations:, window: nil, proxy: nil, services: nil, work_dir: nil, tls: nil, edges: nil)
          @trial = trial
          @app = app
          @server = server
          @engine = engine
          @layout = layout
          @seed = seed
          @max_error_rate = max_error_rate
          @marker_env = marker_env
          @sampler = sampler
          @machine = machine
          @calibrations = calibrations
          @window = window
          @proxy = proxy
          @services = services
          @work_dir = work_dir
          @tls = tls
          @edges = edges
          # The engine's phases arrive on a thread of its own; an interrupt
          # may stop sampling from this one.
          @sampling_lock = Mutex.new
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
        # A think time left to auto (load.think null) is none for a time
        # trial and Experiment::Settings::INSTRUCTIONS_THINK_S for an
        # instructions trial: every request then finds the server idle and
        # takes the same path through it, however busy the machine.
        #
        # :host :: the server's address (default: Servers::HOST; a load
        #          host's trial: the address it reaches the server at)
        def self.settings(trial:, app:, port:, layout:, seed:, work_dir: nil, host: Servers::HOST, tls: nil)
          config = trial.config
          list = requests(config, app)
          if work_dir && list[:requests_file]
            list[:requests_file] = RequestList.for_trial(list[:requests_file], dir: work_dir, probe_path: app.load_path,
                                                                               probe_body: app.expect_session_body)
          end
          think_s = config.load[:think_s] || (instructions?(trial) ? Experiment::Settings::INSTRUCTIONS_THINK_S : 0.0)
          # An instructions trial's requests wait for the server to sleep
          # (Instructions::Window); a calibration (no work_dir) does not.
          quiet = if instructions?(trial) && work_dir
                    Instructions::Window.quiet_pids_file(File.join(work_dir, InstructionsRun::DIRECTORY))
                  end
          LoadSettings.build(url: "#{tls ? "https" : "http"}://#{host}:#{port}#{app.load_path}",
                             **config.load.except(:cookies, :host, :tls, :think_s, :warmup_count), think_s: think_s,
                             warmup_count: warmup_count(trial), quiet_pids_file: quiet, **list,
                             ca_file: tls&.ca_path, cpus: layout.engine_cpus,
                             # Every batch of an instructions trial counts the same requests of a request list.
                             seed: instructions?(trial) ? seed : seed + trial.batch)
        end

        # A warmup of a fixed count: load.warmup_count when given; for an
        # instructions trial left to auto, as many requests as its window
        # counts and at least Experiment::Settings::INSTRUCTIONS_MIN_WARMUP_COUNT
        # (a timed warmup under valgrind warms a JIT's server a tenth as far
        # as the interpreter's); nil (a timed warmup) otherwise.
        def self.warmup_count(trial)
          load = trial.config.load
          return load[:warmup_count] if load[:warmup_count]
          return nil unless instructions?(trial) && load[:count]

          [load[:count], Experiment::Settings::INSTRUCTIONS_MIN_WARMUP_COUNT].max
        end

        # Whether +trial+ runs under valgrind.
        def self.instructions?(trial)
          trial.respond_to?(:instructions?) && trial.instructions?
        end
        private_class_method :instructions?, :warmup_count

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

        # Measures; returns the record's fields of the measurement: result
        # (the engine's document), sample, machine, load_settings, status
        # and reason. The sample and the machine's load also go into facts
        # (the record's known fields) as soon as they are taken: an engine
        # that fails after its window keeps what was sampled.
        def run(facts = {})
          settings, calibration = calibrated(settings())
          facts[:load_settings] = settings.to_h.transform_keys(&:to_s)
          facts[:load_settings]["calibration"] = calibration&.to_h
          # An instructions trial says so in its settings (Instructions.trial?).
          measure = measure_of(@trial)
          facts[:load_settings][Instructions::SETTINGS_KEY] = measure unless measure == Instructions::TIME
          result = begin
            @engine.run(settings, env: @marker_env, on_phase: method(:on_phase))
          ensure
            facts[:sample], facts[:machine], = stop_sampling # the proxy keeps its own window (Proxy::Running)
          end
          { result: result.to_h, sample: facts[:sample], machine: facts[:machine],
            load_settings: facts[:load_settings], **verdict(result) }
        end

        private

        # The settings with the timeout the calibration chose, and the
        # calibration (nil when the experiment set the timeout itself: an
        # explicit setting always wins). The calibration has run on a server
        # of its own before this one booted (Http#calibrate_first); measured here
        # only when called without it.
        def calibrated(settings)
          return [settings, nil] unless @trial.config.load[:timeout_s].nil?

          calibration = @calibrations.fetch(@trial.config, settings, trial_measure: measure_of(@trial))
          [LoadSettings.build(**settings.to_h, timeout_s: calibration.timeout_s), calibration]
        end

        # What +trial+ measures (a plan trial without a measure: time).
        def measure_of(trial)
          trial.respond_to?(:measure) && trial.measure ? trial.measure : Instructions::TIME
        end

        def settings
          self.class.settings(trial: @trial, app: @app, port: (@proxy || @server).port, layout: @layout, seed: @seed,
                              work_dir: @work_dir, host: @server.host, tls: @tls)
        end

        # The engine's phases: the window starts, the window ends. The
        # server's processes learn of each edge from the mark (their own
        # clocks time what they count); the sampler's edges follow.
        def on_phase(phase)
          case phase
          when :measure
            mark(:start) # first: the edges wait for the agents it wakes
            @edges&.started
            start_sampling
          when :end
            @edges&.ended
            mark(:end)
            stop_sampling
          end
        end

        # A mark that cannot be written leaves the processes without their
        # counts (recorded as missing), never the trial without its
        # measurement.
        def mark(edge)
          @window&.mark(edge)
        rescue SystemCallError
          nil
        end

        def start_sampling
          @sampling_lock.synchronize do
            next if @stopped

            @machine.start
            @sampler.start
            @proxy&.start
            @services&.start
            @sampling = true
          end
        rescue Error, SystemCallError
          nil # a sample that cannot be taken is left out, never the measurement
        end

        # The sampler's summary, the machine's and the proxy's window, once
        # (the services keep theirs: Services::Running); nil for a run that
        # ended before its window started.
        def stop_sampling
          @sampling_lock.synchronize do
            @stopped ||= if @sampling
                           [stopped { @sampler.stop }, stopped { @machine.stop }, @proxy && stopped { @proxy.stop },
                            @services && stopped { @services.stop }]
                         else
                           [nil, nil, nil, nil]
                         end
          end
        end

        # One sampler's summary; nil when it cannot give one (the other's
        # is kept).
        def stopped
          yield
        rescue Error, SystemCallError
          nil
        end

        # ok, or failed with the reason.
        def verdict(result)
          return { status: "failed", reason: @server.failure("during the measurement") } unless @server.alive?
          return { status: "failed", reason: @proxy.failure("during the measurement") } if @proxy && !@proxy.alive?
          if (service_failure = @services&.failure("during the measurement"))
            return { status: "failed", reason: service_failure }
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
