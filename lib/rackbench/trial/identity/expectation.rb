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
      #
      # +malloc+ is the allocator every process must map ("glibc",
      # "jemalloc"; see agent/identity.rb): the variant's malloc, else what
      # its own command runs with. +gc_compact_before_fork+ (true/false)
      # asks every worker to come from a compacted heap. +gc_env+ is the
      # RUBY_GC_* values the ruby took (RuntimeSettings), recorded.
      #
      # +build+ is the key of the build a ruby built from source must run
      # (its install's recipe, which the agent reads from the install
      # itself), nil for any other ruby; +recipe+ is that build's record,
      # stored with every trial so a report says what source and patches
      # a label was built from.
      #
      # +gems+ is what the bundle locks (gem name => version, Bundler's own
      # left out), or nil for a trial without a bundle (a benchmark
      # script): every process must load those gems at those versions
      # (Gem.loaded_specs, which Bundler fills with the whole bundle before
      # the server's code runs). +gem_pins+ is what the experiment pins
      # (name => requirement, `gems:`): every process must load each at a
      # version that satisfies it.
      #
      # +force_ruby_platform+ is the bundle's Bundler setting (true: every
      # native gem is its source gem, compiled on this ruby; `gems: {
      # force_ruby_platform: true }`), which Bundler inside every process
      # must report, and then every native gem it loaded must be a source
      # gem; nil when not checked (a trial without a bundle).
      Expectation = Struct.new(:label, :options, :description, :exe, :jit, :env, :server_gem, :server_version,
                               :threads, :bundle_without, :malloc, :gc_compact_before_fork, :gc_env, :build, :recipe,
                               :gems, :gem_pins, :force_ruby_platform, keyword_init: true)

      class Expectation
        PROBE_TIMEOUT_S = 120
        # Two methods compiled with a C compiler take about 1 s here.
        MJIT_PROBE_TIMEOUT_S = 60

        # Runs variant's command on the identity script with env (a
        # ServerEnv) and returns the report as a Hash, plus "gc_params"
        # (RuntimeSettings.gc_params: the script runs with -w, so the ruby
        # names the GC variables it reads) and, when MJIT is on,
        # "mjit_problem" (nil when it compiles). Raises SetupError when it
        # cannot run.
        def self.probe(variant, env, run: Rubies::Child.method(:run))
          Dir.mktmpdir("rackbench-identity") do |dir|
            FileUtils.mkdir_p(File.join(dir, "identity"))
            vars = env.to_h.reject { |name, _| name.start_with?("RACKBENCH_", "BUNDLE_") }
            vars = vars.merge("RACKBENCH_TRIAL_DIR" => dir, ENV_LIST_VAR => "")
            result = run.call([*variant.command, "-w", AGENT], env: vars, timeout_s: PROBE_TIMEOUT_S, chdir: dir)
            report = Dir.glob(File.join(dir, "identity", "*.json")).first
            unless result.success? && report
              raise SetupError, "ruby '#{variant.name}' (#{variant.command.join(" ")}) cannot describe itself: " \
                                "#{result.timed_out ? "timed out" : result.output.to_s.lines.last.to_s.strip}"
            end
            described = JSON.parse(File.read(report)).merge("gc_params" => RuntimeSettings.gc_params(result.output))
            next described unless described["jit"] == "mjit"

            described.merge("mjit_problem" => RuntimeSettings.mjit_problem(variant.command, env: vars, chdir: dir,
                                                                           run: run, timeout_s: MJIT_PROBE_TIMEOUT_S))
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
        # :gc_compact_before_fork :: the server compacts the heap before forking workers (default: false)
        # :gems :: the bundle's locked gem versions, or nil (default: nil, not checked)
        # :gem_pins :: gem name => requirement the trial pins (default: {})
        #
        # Raises SetupError, before the server boots, for a setting the
        # variant's own command shows it cannot honour: a RUBY_GC_*
        # variable the ruby did not take, MJIT that compiles nothing, a
        # compaction asked of a ruby without GC.compact.
        def self.build(variant:, probe:, env:, server_gem:, server_version:, threads: nil, bundle_without: nil,
                       gc_compact_before_fork: false, gems: nil, gem_pins: {})
          ruby = "ruby '#{variant.name}' (#{probe["description"].to_s[/\A\S+ \S+/]})"
          params = probe["gc_params"] || {}
          problems = RuntimeSettings.gc_problems(env.checked, params, ruby: ruby)
          problems << probe["mjit_problem"] if probe["mjit_problem"]
          if gc_compact_before_fork && !probe.dig("gc_compact", "supported")
            problems << "server option gc_compact_before_fork needs GC.compact, which #{ruby} does not have"
          end
          raise SetupError, "#{problems.first}#{" (and #{problems.size - 1} more)" if problems.size > 1}" if problems.any?

          new(label: variant.name, options: variant.options, description: probe["description"], exe: probe["exe"],
              jit: probe["jit"], env: env.checked, server_gem: server_gem, server_version: server_version,
              threads: threads, bundle_without: bundle_without,
              malloc: variant.malloc || probe.dig("malloc", "name"), gc_compact_before_fork: gc_compact_before_fork,
              gc_env: RuntimeSettings.gc_taken(env.checked, params), build: variant.install.recipe&.fetch("key", nil),
              recipe: variant.install.recipe && Rubies::Build::Recipe.stored(variant.install.recipe),
              gems: gems&.reject { |name, _| name == "bundler" }, gem_pins: gem_pins).freeze
        end

        # +expectation+ with what its trial's bundle (a BundleEnv, or any
        # bundle that answers force_ruby_platform?) sets for its gems.
        def self.with_bundle(expectation, bundle)
          return expectation unless bundle.respond_to?(:force_ruby_platform?)

          copy = expectation.dup
          copy.force_ruby_platform = bundle.force_ruby_platform?
          copy.freeze
        end

        # JSON-ready, for the trial's record; without the locked gems, which
        # the record keeps once already (gem_versions).
        def to_h
          super.transform_keys(&:to_s).except("gems")
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
