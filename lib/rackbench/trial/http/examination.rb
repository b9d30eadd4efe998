# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # What `rackbench check` learns about one (ruby, server, app) before
      # hours are spent on it: whether its gems install, how long the
      # server takes to boot and stop, whether it passes the identity and
      # app checks, how slow the app is under the experiment's load, and
      # the load its trials would run with.
      #
      # config :: the Experiment::Config examined
      # status :: "ok" or "failed"; reason :: why it failed (nil when ok)
      # bundle_s, boot_s, stop_s :: seconds each step took (nil when not reached)
      # identity :: what the server reported it runs (Identity record), or nil
      # calibration :: a Calibration::Result, or nil
      # load :: the LoadSettings its trials would run with (nil when not reached)
      # timeout_source :: "experiment" (load.timeout set) or "calibration"
      Examination = Struct.new(:config, :status, :reason, :bundle_s, :boot_s, :stop_s, :identity, :calibration,
                               :load, :timeout_source, keyword_init: true) do
        def ok? = status == "ok"

        # Seconds one trial would take: boot, warmup, window and stop.
        def trial_s
          return nil unless boot_s && stop_s && load

          boot_s + load.warmup_s + load.duration_s + stop_s
        end

        def to_h
          { "config" => config.dims, "label" => config.to_s, "status" => status, "reason" => reason,
            "bundle_s" => bundle_s, "boot_s" => boot_s, "stop_s" => stop_s, "trial_s" => trial_s,
            "identity" => identity, "calibration" => calibration&.to_h,
            "load" => load&.to_h&.transform_keys(&:to_s)&.except("url", "cpus", "seed", "raw_file", "allow_remote"),
            "timeout_source" => timeout_source }
        end
      end

      # Examines trial's configuration (see Examination): installs, boots,
      # checks and calibrates as its first trial would, measures nothing,
      # stores nothing. Always calibrates, so that an explicit timeout can
      # be compared with what the app needs. Interrupt propagates after the
      # server was stopped; every other failure is a failed Examination.
      def examine(trial)
        config = trial.config
        variant = @context.variants.fetch(config.ruby.label)
        facts = { config: config, timeout_source: config.load[:timeout_s] ? "experiment" : "calibration" }
        started = now
        scene = scene(trial, variant, examining: true)
        parts = @companions.parts(scene)
        bundle = bundle_for(config, scene.app, variant, scene.adapter)
        # Installed by #prepare before the examinations: its install's time.
        facts[:bundle_s] = (@bundles.respond_to?(:install_s) && @bundles.install_s(bundle)) || now - started
        env = server_env(scene, bundle, parts)
        booted = launch(scene, bundle, env, parts).boot
        facts.merge!(boot_s: booted.boot_s, identity: booted.identity)
        begin
          calibrate(scene, parts, booted.server, facts)
        ensure
          facts[:stop_s] = booted.server.stop(grace_s: @context.stop_grace_s)[:stop_s]
        end
        Examination.new(status: "ok", **facts)
      rescue Interrupted, Interrupt
        raise
      rescue Error => e
        Examination.new(status: "failed", reason: e.message, **facts)
      end

      private

      def calibrate(scene, parts, server, facts)
        trial = scene.trial
        settings = LoadRun.settings(trial: trial, app: scene.app, port: server.port, layout: @context.layout,
                                    seed: source.seed, tls: scene.tls, parts: parts)
        facts[:load] = settings
        calibration = Calibration.new(engine: @engine, marker_env: @context.marker_env).measure(settings)
        facts[:calibration] = calibration
        facts[:load] = LoadSettings.build(**settings.to_h, timeout_s: calibration.timeout_s) unless trial.config.load[:timeout_s]
      end
    end
  end
end
