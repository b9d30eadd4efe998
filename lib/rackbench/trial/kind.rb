# frozen_string_literal: true

require "fileutils"
require_relative "../monotonic_clock"

module Rackbench
  module Trial
    # Base of the shipped kinds of trial (see Trial for the interface): the
    # parts every kind shares, from the trial's identity fields to its
    # directory and the guard every process it starts runs behind.
    class Kind
      include MonotonicClock

      GUARD = File.expand_path("../../rackbench-guard", __dir__)

      # The Reading of this kind's records.
      def self.reading
        Reading
      end

      # The name the kind is registered under (its NAME).
      def self.kind_name
        self::NAME
      end

      def initialize(context)
        @context = context
      end

      # nil: every configuration can run, unless the kind says otherwise.
      def unsupported_reason(_config, _variant)
        nil
      end

      def announce
        []
      end

      # Checks what the kind needs before anything is stored (raises
      # ConfigError); nothing by default.
      def check!; end

      # Runs the block (the run's trials) with what the kind keeps for the
      # whole run started before it and stopped after it, however it ends
      # (the HTTP kind's services); only the block by default.
      def around_run
        yield
      end
      # Makes ready, before the first of +trials+ runs (the trials left to
      # run, Experiment::Plan::Trial), what they share and what could stop
      # them all: the HTTP kind installs their Bundler environments, so
      # that gems a ruby cannot run stop the run before any trial instead
      # of failing each trial in turn. Raises SetupError naming the
      # problem; nothing by default.
      def prepare(_trials); end

      private

      # Runs the block, which returns the outcome's fields (status, reason,
      # measurements), and builds the trial's Record with its identity,
      # timing and known fields around them. The block gets a Hash to put
      # what it learns on the way into (gem versions, what the server ran),
      # which the record keeps also when a later step fails. Interrupt and
      # Interrupted propagate; any other rackbench Error becomes a failed
      # record with its message.
      def record(trial, **known)
        started_at = Time.now.utc
        started = now
        facts = {}
        outcome = begin
          yield facts
        rescue Interrupted
          raise
        rescue Error => e
          { status: "failed", reason: e.message }.merge(failure_fields(e))
        end
        Record.new(**identity_fields(trial), **known, **facts, **outcome, started_at: started_at,
                                                                          finished_at: Time.now.utc, wall_s: now - started)
      end

      # More fields a kind keeps from a failure (what ran, when it is known).
      def failure_fields(_error)
        {}
      end

      def identity_fields(trial)
        dims = trial.config.dims
        { key: trial.key, batch: trial.batch, position: trial.index, kind: self.class.kind_name, dims: dims,
          ruby: dims["ruby"], server: dims["server"], app: dims["app"], processes: dims["processes"],
          threads: dims["threads"] }
      end

      # The trial's own directory: its files, and the channel from the
      # processes it starts.
      def work_dir(trial)
        File.join(@context.results_dir, "work", slug(trial)).tap { |dir| FileUtils.mkdir_p(dir) }
      end

      def log_path(trial)
        File.join(@context.logs_dir, "#{slug(trial)}.log")
      end

      # "0007-rack-hello-puma-ruby-p1-t4-b2": position, then what the
      # configuration is, then the batch; safe as a file name.
      def slug(trial)
        [format("%04d", trial.index), *slug_parts(trial.config), "b#{trial.batch}"]
          .join("-").gsub(/[^A-Za-z0-9._-]/, "_")
      end

      def slug_parts(config)
        config.dims.values.map(&:to_s)
      end

      # If the runner itself dies (kill -9), what it started must not live
      # on: rackbench-guard sets the parent-death signal, which survives
      # the exec of taskset and the program, and refuses to start it when
      # the runner is already gone (the watchdog stops the rest).
      def guard
        [GUARD, Process.pid.to_s]
      end

      # What the trials come from (an Experiment, Micro::Settings).
      def source
        @context.source
      end
    end
  end
end
