# frozen_string_literal: true

require_relative "../monotonic_clock"

module Rackbench
  module Services
    # A started service (Launch#start), for the whole run: what the app
    # gets in its variable, the template kept after the app's setup and
    # restored before each trial (its state checked against the
    # template's), its process tree sampled over each trial's window, its
    # stop, and each trial's document (Trial::Record#services).
    class Running
      include MonotonicClock

      attr_reader :kind, :spec, :app_name, :process, :endpoint, :dir, :account, :boot_s

      # :sampler :: called with the service's ServerProcess, returns a new #start/#stop sampler (one per window)
      def initialize(kind:, spec:, app_name:, process:, endpoint:, dir:, account:, boot_s:, sampler:, stop_grace_s:)
        @kind = kind
        @spec = spec
        @app_name = app_name
        @process = process
        @endpoint = endpoint
        @dir = dir
        @account = account
        @boot_s = boot_s
        @sampler = sampler
        @stop_grace_s = stop_grace_s
        @template = nil
        @trial = {}
      end

      # { "DATABASE_URL" => "postgresql://..." }: what the app's processes
      # get, with what the kind adds for its clients (Kind#client_env).
      def env
        { spec.env_name => kind.url(endpoint), **kind.client_env(endpoint) }
      end

      def alive?
        @process.alive?
      end

      def templated?
        !@template.nil?
      end

      # Keeps the service's state as the template (after the app's setup);
      # returns its seconds.
      def keep_template!
        check_alive!
        started = now
        @template = kind.keep_template(endpoint)
        now - started
      end

      # Puts the template back before a trial and checks that the state is
      # the template's; keeps the seconds it took and the state for the
      # trial's document. Raises SetupError naming the difference.
      def restore!
        check_alive!
        started = now
        state = kind.restore(endpoint)
        @trial = { "restore_s" => (now - started).round(4), "state" => summary(state) }
        difference = state_difference(state)
        raise SetupError, "#{describe}: the state restored from the template differs from it: #{difference}" if difference
      end

      # The window starts: a new sampler of the service's tree. A sample
      # that cannot start is left out, never the measurement.
      def start
        @window_sampler = @sampler.call(@process).start
        self
      rescue Error, SystemCallError
        @window_sampler = nil
        self
      end

      # The window ends: the sample goes into the trial's document.
      def stop
        sample = begin
          @window_sampler&.stop
        rescue Error, SystemCallError
          nil
        end
        @window_sampler = nil
        @trial = @trial.merge("sample" => sample&.transform_keys(&:to_s))
      end

      # Forgets the last trial's restore and sample (a new trial begins).
      def begin_trial
        @trial = {}
      end

      # "service postgresql of app rails-posts-pg: postgres exited with status 1 during the measurement: ..."
      def failure(when_text)
        error = ServerProcess::LogError.line(@process.log_tail)
        "#{describe}: #{kind.program} #{@process.exit_description} #{when_text}#{": #{error}" if error} " \
          "(log: #{@process.log_path})"
      end

      # Stops the service's whole tree (TERM: PostgreSQL's smart shutdown,
      # which ends at once with no client left; then KILL after the grace).
      def stop_process
        @stop_s ||= @process.stop(grace_s: @stop_grace_s)[:stop_s]
      end

      # The trial's document (Trial::Record#services, doc/store.md).
      def to_h
        { "name" => kind.name, "program" => kind.program, "version" => kind.version, "env" => spec.env_name,
          "endpoint" => endpoint.to_s, "account" => account, "boot_s" => boot_s&.round(4), **@trial }
      end

      private

      def describe
        "service #{kind.name} of app #{app_name}"
      end

      def check_alive!
        raise SetupError, failure("before the trial") unless alive?
      end

      # What the document keeps of a state: its totals (not PostgreSQL's
      # count per table, which may run to hundreds of tables).
      def summary(state)
        state.reject { |key, _| key == "rows_by_table" }
      end

      def state_difference(state)
        return nil if @template.nil? || @template == state
        return PostgresqlState.difference(@template, state) if @template.key?("rows_by_table")

        "#{summary(state)} against #{summary(@template)}"
      end
    end
  end
end
