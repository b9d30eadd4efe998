# frozen_string_literal: true

require "json"
require "fileutils"
require "tmpdir"

module Rackbench
  module Trial
    module Identity
      # What every process of a trial must report (see agent/identity.rb):
      # the ruby and JIT the variant's own command gives, the variables the
      # trial set, the server gem the bundle locks (a server's trial), the
      # libraries LD_PRELOAD names.
      #
      # The ruby and the JIT are not inferred from option names (whether
      # --jit means YJIT or MJIT depends on the ruby's version): the
      # variant's own command line runs the same identity script once, with
      # the trial's variables, and its answer is what the server must match.
      # RUBY_DESCRIPTION itself changes with the JIT ("+YJIT"), so it is
      # compared as that run printed it.
      #
      # +threads+ (a server's threads per process, or nil) is no claim to
      # prove but a bar to compare with: a database pool below it is
      # flagged (Comparison). +bundle_without+ is the Gemfile groups the
      # bundle leaves out (sorted names), which Bundler inside the server
      # must report, or nil when not checked.
      Expectation = Struct.new(:label, :options, :description, :exe, :jit, :env, :server_gem, :server_version,
                               :threads, :bundle_without, keyword_init: true)

      class Expectation
        PROBE_TIMEOUT_S = 120

        # Runs variant's command on the identity script with env (a
        # ServerEnv) and returns the report as a Hash. Raises SetupError
        # when it cannot run.
        def self.probe(variant, env)
          Dir.mktmpdir("rackbench-identity") do |dir|
            FileUtils.mkdir_p(File.join(dir, "identity"))
            vars = env.to_h.reject { |name, _| name.start_with?("RACKBENCH_", "BUNDLE_") }
            vars = vars.merge("RACKBENCH_TRIAL_DIR" => dir, ENV_LIST_VAR => "")
            result = Rubies::Child.run([*variant.command, AGENT], env: vars, timeout_s: PROBE_TIMEOUT_S, chdir: dir)
            report = Dir.glob(File.join(dir, "identity", "*.json")).first
            unless result.success? && report
              raise SetupError, "ruby '#{variant.name}' (#{variant.command.join(" ")}) cannot describe itself: " \
                                "#{result.timed_out ? "timed out" : result.output.to_s.lines.last.to_s.strip}"
            end
            JSON.parse(File.read(report))
          end
        end

        # The expectation for one trial.
        #
        # :variant :: the Rubies::Variant
        # :probe :: what .probe returned for the variant and the trial's env
        # :env :: the ServerEnv (its #checked variables must hold)
        # :server_gem :: name of the server's gem, :server_version its locked version
        # :threads :: the server's threads per process (default: nil)
        # :bundle_without :: the groups the bundle leaves out, or nil (default: nil, not checked)
        def self.build(variant:, probe:, env:, server_gem:, server_version:, threads: nil, bundle_without: nil)
          new(label: variant.name, options: variant.options, description: probe["description"], exe: probe["exe"],
              jit: probe["jit"], env: env.checked, server_gem: server_gem, server_version: server_version,
              threads: threads, bundle_without: bundle_without).freeze
        end

        def to_h
          super.transform_keys(&:to_s)
        end
      end

      # What each variant's own command reports about itself, asked once
      # per command and set of variables (a run's trials share them).
      class Probes
        # probe: called with a variant and a ServerEnv, returns the report
        # (default: Expectation.probe; tests pass a fake).
        def initialize(probe = Expectation.method(:probe))
          @probe = probe
          @answers = {}
        end

        def fetch(variant, env)
          key = [variant.command, env.to_h.reject { |name, _| name.start_with?("RACKBENCH_", "BUNDLE_") }.sort]
          @answers[key] ||= @probe.call(variant, env)
        end
      end
    end
  end
end
