# frozen_string_literal: true

module Rackbench
  module Services
    # The services of one app (Running, in the order its `services:`
    # lists them), as a trial uses them: the variables its server gets,
    # the same state before every trial, the window's samples, and the
    # trial's documents.
    class Group
      attr_reader :app_name, :services

      def initialize(app_name, services)
        @app_name = app_name
        @services = services.freeze
      end

      # Every service's variable: { "DATABASE_URL" => ..., "REDIS_URL" => ... }.
      def env
        @services.map(&:env).reduce({}, :merge)
      end

      # Whether the template is kept (the app's setup ran before it): a
      # built-in app's setup script then has nothing left to do.
      def templated?
        @services.all?(&:templated?)
      end

      # A trial begins: the last trial's restores and samples are forgotten.
      def begin_trial
        @services.each(&:begin_trial)
      end

      # Before a trial's server boots, after the app's setup and reset
      # hooks: the first time, the services' state becomes the template;
      # then, every time, the template is restored, so that every trial,
      # the first included, starts from a fresh copy of it. Raises
      # SetupError (a service that died, a state that differs).
      def prepare_trial!
        begin_trial
        @services.each(&:keep_template!) unless templated?
        @services.each(&:restore!)
      end

      # The window's edges: each service's tree is sampled in between.
      def start
        @services.each(&:start)
        self
      end

      def stop
        @services.each(&:stop)
      end

      # Why the trial cannot count (a service ended), or nil.
      def failure(when_text)
        dead = @services.find { |service| !service.alive? }
        dead&.failure(when_text)
      end

      # The trial's documents (Trial::Record#services), in the app's order.
      def documents
        @services.map(&:to_h)
      end

      # Stops every service, the last started first; raises the first
      # failure once all were tried.
      def stop_processes
        errors = @services.reverse.filter_map do |service|
          service.stop_process
          nil
        rescue SetupError => e
          e
        end
        raise errors.first if errors.any?
      end
    end
  end
end
