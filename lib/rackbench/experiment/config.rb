# frozen_string_literal: true

module Rackbench
  class Experiment
    # One configuration of the matrix: what one trial runs (a trial is a
    # configuration in one batch). Frozen.
    #
    # ruby :: RubySpec (label, install, options, env)
    # server :: ServerSpec (label, adapter name, options)
    # app :: AppSpec (name, path, health, load_path, expectations)
    # processes, threads :: the server's process and thread counts
    # proxy :: the topology in front of the server (Proxy.names; "none": the load goes to the server)
    # load :: every load setting resolved, keyed as LoadSettings.build takes
    #         them: connections, threads, duration_s, warmup_s, rate,
    #         keepalive, requests_file, timeout_s (durations Float seconds)
    # env :: the experiment's +env+ variables for this configuration
    #        (String => String); the ruby's own env is in ruby.env
    # dims :: Hash of dimension name => value: "ruby", "server" (labels),
    #         "app", "processes", "threads" always, plus "load.NAME",
    #         "env.NAME" and "gem.NAME" for the load, env and gems keys that
    #         have several values
    # gems :: the gems this configuration pins (gems:): name => normalized
    #         requirement, e.g. {"rails" => "~> 7.2.0"}; {} when none
    # key :: canonical JSON of dims: identifies the configuration across
    #        runs (stored with each trial, used by resume)
    Config = Struct.new(:ruby, :server, :app, :processes, :threads, :load, :env, :dims, :key, :proxy, :gems,
                        keyword_init: true)

    # Reopened so that its methods live in the class, not in Experiment.
    class Config
      # Builds a frozen Config; +key+ is derived from +dims+.
      def self.build(dims:, **attributes)
        dims = dims.dup.freeze
        new(dims: dims, key: Canonical.json(dims).freeze, proxy: Proxy::NONE, gems: {}.freeze, **attributes).freeze
      end

      # Booting, probing and stopping a server, per trial, for estimates.
      OVERHEAD_S = 3.0
      # A window of a fixed count lasts what its requests take: guessed at
      # a millisecond each until the run has measured some
      # (Runner::Estimate).
      GUESS_S_PER_REQUEST = 0.001

      # How long one trial of it takes, roughly: warmup + window + the
      # server's boot and stop.
      def estimated_s
        load[:warmup_s] + window_s + OVERHEAD_S
      end

      # The window's length: its duration, or its count's guess.
      def window_s
        load[:count] ? load[:count] * GUESS_S_PER_REQUEST : load[:duration_s]
      end

      # Whether its per-request timeout is left to calibration (load.timeout
      # auto: Trial::Http::Calibration).
      def calibrated_timeout?
        load[:timeout_s].nil?
      end

      # Whether a proxy stands between the load engine and the server.
      def proxied?
        proxy != Proxy::NONE
      end

      # The server's total thread count (processes x threads).
      def server_threads
        processes * threads
      end

      # "ruby=ruby server=puma app=rack-hello processes=2 threads=4", for
      # plans and progress lines.
      def to_s
        dims.map { |name, value| "#{name}=#{format_value(name, value)}" }.join(" ")
      end

      private

      DURATION_DIMS = %w[load.duration load.warmup load.timeout].freeze
      private_constant :DURATION_DIMS

      def format_value(name, value)
        return "null" if value.nil?
        return value.to_s unless value.is_a?(Float)

        text = value == value.round ? value.round.to_s : value.to_s
        DURATION_DIMS.include?(name) ? "#{text}s" : text
      end
    end
  end
end
