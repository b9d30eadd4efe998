# frozen_string_literal: true

module Rackbench
  class Runner
    # The measured part of a trial: the load engine's warmup and window
    # against a booted server, the server's process tree sampled over the
    # window (Sampler) along with what else the machine did (MachineLoad),
    # the results recorded and the trial judged.
    class LoadRun
      # :trial, :app (an App), :server (a ServerProcess), :engine (a LoadEngine)
      # :layout :: the CpuLayout (the engine's CPUs)
      # :seed :: the experiment's seed (the request mix uses seed + batch)
      # :max_error_rate :: above it the trial fails
      # :results_dir :: the run's results directory (the engine carries its marker)
      def initialize(trial:, app:, server:, engine:, layout:, seed:, max_error_rate:, results_dir:)
        @results_dir = results_dir
        @trial = trial
        @app = app
        @server = server
        @engine = engine
        @layout = layout
        @seed = seed
        @max_error_rate = max_error_rate
      end

      # Measures, and merges the results and the verdict (status, reason)
      # into attrs.
      def run(attrs)
        config = @trial.config
        settings = LoadSettings.build(url: "http://#{Servers::HOST}:#{@server.port}#{@app.load_path}",
                                      **config.load.except(:cookies), **requests(config),
                                      cpus: @layout.engine_cpus, seed: @seed + @trial.batch)
        sampler = Sampler.new(@server.pid, pgid: @server.pgid)
        machine = MachineLoad.new
        # The sampler covers the measured window only: it starts when the
        # engine's warmup ends (the engine starts its clock ~20 ms after
        # launch, a negligible offset at sampling intervals of 250 ms).
        starter = Thread.new do
          sleep settings.warmup_s
          machine.start
          sampler.start
        end
        begin
          result = @engine.run(settings, env: Watchdog.marker_env(@results_dir))
        ensure
          starter.kill
          starter.join
          sample = stop_sampler(sampler)
          attrs[:machine] = machine.stop
        end
        record(attrs, result, sample, settings)
        judge(attrs, result)
      end

      private

      # The request list, if any, and the cookie jar. A list given in the
      # experiment file (load.requests) wins over the app's own (the mix
      # variant of rails-posts). A list keeps cookies per connection unless
      # load.cookies says false, as a browser would: a session that logs in
      # first must stay logged in. A single URL gets no jar unless asked.
      def requests(config)
        file = config.load[:requests_file] || @app.requests
        cookies = config.load[:cookies]
        { requests_file: file, cookies: cookies.nil? ? !file.nil? : cookies }
      end

      # The summary, or nil when the run ended before the warmup did.
      def stop_sampler(sampler)
        sampler.stop
      rescue Error
        nil
      end

      def record(attrs, result, sample, settings)
        attrs.merge!(
          warmup_s: result.warmup["duration_s"], measure_s: result.duration_s, rps: result.rps,
          requests: result.requests, errors: result.failed_count, error_rate: result.failure_rate,
          latency_us: result.latency_us, engine_result: result.to_h, sampler: sample,
          rss_peak_bytes: sample&.fetch(:rss_peak_bytes, nil), pss_peak_bytes: sample&.fetch(:pss_peak_bytes, nil),
          cpu_user_s: sample&.fetch(:cpu_user_s, nil), cpu_system_s: sample&.fetch(:cpu_system_s, nil),
          load_settings: settings.to_h.transform_keys(&:to_s)
        )
      end

      def judge(attrs, result)
        unless @server.alive?
          return attrs.merge!(status: "failed", reason: @server.failure("during the measurement"))
        end
        if result.requests.zero?
          return attrs.merge!(status: "failed", reason: "no response in the measured window (errors: #{result.errors})")
        end
        rate = result.failure_rate
        if rate > @max_error_rate
          return attrs.merge!(status: "failed",
                              reason: format("error rate %.2f%% above %.2f%% (%s)", rate * 100, @max_error_rate * 100,
                                             failures(result)))
        end

        attrs[:status] = "ok"
      end

      # Failed requests by kind: the engine's transport errors, and
      # responses whose status is not 2xx or 3xx by status ("500" => 12):
      # a server answering 500 fast is not a result either.
      def failures(result)
        statuses = result.status.reject { |code, _| code.to_i.between?(200, 399) }
        result.errors.select { |_, n| n.positive? }.merge(statuses.select { |_, n| n.positive? })
      end
    end
  end
end
