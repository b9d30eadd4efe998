# frozen_string_literal: true

require_relative "kind"
require_relative "identity"
require "fileutils"

module Rackbench
  module Trial
    # A script trial: a benchmark script (a micro-benchmark such as
    # fibers_bench.rb, doc/micro.md) run in a fresh process of the variant's
    # ruby, with its options and variables, pinned, behind the guard, with a
    # deadline; its one JSON document is the trial's result. Every process
    # of the script (the script's own and each worker it forks) reports
    # what it ran through the identity agent, and the run is checked
    # against the variant once it has ended (Identity::Finished): a run
    # whose processes ran anything else fails, naming the difference.
    #
    # The source (a Micro::Settings) says which script, with which
    # arguments per configuration, and the document's format.
    #
    # Collaborators, injected for tests:
    # :child :: runs an argv to completion (Rubies::Child.run's interface; default: Rubies::Child.method(:run))
    # :script :: the script to run instead of the source's (default: source.script)
    # :probe :: called with a variant and a ServerEnv, returns what that ruby reports about itself
    #           (default: Identity::Expectation.probe)
    class Script < Kind
      NAME = "script"
      # Ruby engines without fork(2): their forked-process configurations
      # are left out of the plan, with this reason.
      NO_FORK_ENGINES = %w[jruby truffleruby].freeze

      def self.reading = Script::Reading

      def initialize(context, child: Rubies::Child.method(:run), script: nil,
                     probe: Identity::Expectation.method(:probe))
        super(context)
        @child = child
        @script = script
        @probes = Identity::Probes.new(probe)
      end

      def unsupported_reason(config, variant)
        engine = variant.install.engine
        "fork is not available on #{engine}" if config.mode == "processes" && NO_FORK_ENGINES.include?(engine)
      end

      def announce
        layout = @context.layout
        layout.pinned? ? ["pinned to CPU #{layout.server_cpus.join(",")}"] : []
      end

      # Runs trial; returns its Record. Interrupt and Interrupted propagate
      # after the process group was stopped (Rubies::Child does).
      def run(trial)
        variant = @context.variants.fetch(trial.config.ruby)
        log = log_path(trial)
        record(trial, ruby_description: variant.description, log_path: log, layout: layout_fields,
                      load_settings: source.script_settings(trial.config)) do
          execute(trial, variant, log)
        end
      end

      private

      def execute(trial, variant, log)
        work = work_dir(trial)
        env = environment(variant, work)
        # What the variant's ruby says it runs, asked before the run: a ruby
        # that cannot say fails the trial before it measures anything.
        expectation = Identity::Expectation.build(variant: variant, probe: @probes.fetch(variant, env), env: env,
                                                  server_gem: nil, server_version: nil)
        reports = Identity.directory(work)
        FileUtils.rm_rf(reports)
        FileUtils.mkdir_p(reports)
        argv = guard + @context.layout.server_prefix + variant.command +
               ["-r", Identity::AGENT, @script || source.script, *source.script_arguments(trial.config)]
        File.write(log, "# #{argv.join(" ")}\n")
        offset = File.size(log)
        result = @child.call(argv, env: env.to_h, timeout_s: source.timeout_s, log_path: log)
        outcome = Outcome.parse(output: read_from(log, offset), format: source.document_format,
                                exit_status: result.status, timed_out: result.timed_out, timeout_s: source.timeout_s)
        outcome.merge(identity_fields_of(work, expectation, outcome))
      rescue SystemCallError => e
        { status: "failed", reason: "cannot start #{argv ? argv.first : "the script"}: #{e.message}" }
      end

      # What the run's processes reported, checked against the variant: a
      # run that measured fails when they ran anything else; a run that
      # failed keeps its own reason and records what is known.
      def identity_fields_of(work, expectation, outcome)
        identity = Identity::Finished.new(trial_dir: work, expectation: expectation).verify!
        { identity: identity, ruby_description: identity["description"] }
      rescue IdentityMismatch => e
        fields = e.record ? { identity: e.record } : {}
        outcome[:status] == "ok" ? fields.merge(status: "failed", reason: e.message) : fields
      end

      # The run's whole environment, built as a server's is (ServerEnv):
      # nothing of the shell's but the machine's basics, so an exported
      # RUBY_YJIT_ENABLE cannot turn the plain variant into the YJIT one.
      # The trial's directory and the run's marker mark every process of it
      # (the workers inherit them). Every variable any variant of the run
      # sets is checked in each trial, set or unset.
      def environment(variant, work_dir)
        ServerEnv.new(parent: @context.parent_env, bundle: nil, ruby_env: variant.env,
                      trial_env: { "RACKBENCH_TRIAL_DIR" => work_dir, **@context.marker_env },
                      also_check: @context.variants.values.flat_map { |v| v.env.keys }.uniq)
      end

      def layout_fields
        { "server_cpus" => @context.layout.server_cpus, "engine_cpus" => nil }
      end

      def read_from(path, offset)
        File.open(path, "rb") do |file|
          file.seek(offset)
          file.read
        end
      end

      # The settings' fingerprint tells apart micro experiments sharing a
      # results directory.
      def slug_parts(config)
        [source.app_name, source.fingerprint[0, 8], config.ruby, config.mode, "w#{config.workers}"]
      end
    end

    register Script::NAME, Script
  end
end

require_relative "script/reading"
require_relative "script/outcome"
