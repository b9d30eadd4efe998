# frozen_string_literal: true

module Rackbench
  class Runner
    # The long work a run does once, before its first trial, besides
    # installing gems: what a server of the plan needs built on this
    # machine (Passenger's agent: minutes the first time, then cached).
    # Each server adapter says what it will do for each ruby install of
    # the trials that use it (Servers::Adapter#preparation); the same
    # work asked for by two rubies is listed once. The run's announcement,
    # `--dry-run` and `rackbench check` show it, with its estimate, before
    # it starts, as a ruby built from source shows its build.
    class Preparation
      # trials :: Experiment::Plan::Trial list (those of a source without servers need nothing)
      # variants :: ruby label => Rubies::Variant, as the runner resolved them
      def initialize(trials, variants)
        @trials = trials
        @variants = variants
      end

      # The Servers::Preparation steps, in the order the trials first need them.
      def steps
        @steps ||= server_installs.flat_map do |server, install|
          [Servers.fetch(server).preparation(install)].compact
        end.uniq(&:key)
      end

      def empty? = steps.empty?

      # Seconds the steps likely take.
      def estimate_s
        steps.sum(&:estimate_s)
      end

      # One text per step: "compile Passenger 6.2.1's agent (once for
      # every ruby, then cached), about 4m 12s (as ...)".
      def texts
        steps.map { |step| "#{step.text}, about #{Experiment::Plan.format_duration(step.estimate_s)} (#{step.basis})" }
      end

      # The steps for `rackbench check --json` (doc/output.md).
      def to_a
        steps.map { |step| { "what" => step.text, "estimate_s" => step.estimate_s.round(1), "basis" => step.basis } }
      end

      private

      # [server name, Rubies::Install] of each trial with a server, once each.
      def server_installs
        @trials.filter_map do |trial|
          config = trial.config
          next unless config.respond_to?(:server) && config.server

          variant = @variants[config.dims["ruby"]]
          variant && [config.server.name, variant.install]
        end.uniq { |server, install| [server, install.path] }
      end
    end
  end
end
