# frozen_string_literal: true

require_relative "../../bundle_env"
require_relative "agents"

module Rackbench
  module Servers
    # What a run will do about Passenger's agent for one ruby install, said
    # before anything is installed (the plan, `--dry-run`, `rackbench
    # check`): nothing when the agent of the passenger version it will use
    # is in the install's gems or cached on this machine, else its compile
    # (minutes) with an estimate.
    #
    # Which passenger version a bundle locks is only known once it is
    # installed; until then the version is the newest one the install's
    # gem directory holds, else the newest cached agent's (a new bundle
    # resolves the same passenger as the others, unless the gem server has
    # a newer one: then the run compiles it, with its progress, where the
    # plan said it would not).
    class PassengerAgentPlan
      # Before this machine has compiled any agent: Passenger 6.2.1's 92
      # objects took 4m12s on a quiet 2-CPU machine (doc/performance.md);
      # its build compiles one file at a time, so more CPUs do not shorten
      # it, and a loaded machine takes longer.
      FIRST_COMPILE_GUESS_S = 252.0

      # install :: the Rubies::Install whose gems would hold the agent
      # :agents :: the agents kept on this machine (default: PassengerAgents.new)
      # :bundles_root :: where the Bundler environments live (default: BundleEnv.default_root)
      def initialize(install, agents: PassengerAgents.new, bundles_root: BundleEnv.default_root)
        @install = install
        @agents = agents
        @gem_dir = BundleEnv.gem_dir(install, root: bundles_root)
      end

      # The passenger version the install's bundles are likely to lock, or
      # nil when neither its gems nor this machine's agents name one.
      def version
        installed_versions.first || @agents.versions.first
      end

      # Whether a run would find the agent ready (no compile).
      def ready?
        v = version
        return false unless v

        @agents.cached?(v) || File.executable?(File.join(@gem_dir, "gems", "passenger-#{v}", "buildout",
                                                         "support-binaries", PassengerAgents::AGENT))
      end

      # A Servers::Preparation for the compile, or nil when the agent is ready.
      def preparation
        return nil if ready?

        what = version ? "Passenger #{version}'s agent" : "Passenger's agent"
        last = @agents.last_build
        estimate_s, basis = if last
                              [last.duration_s, "as Passenger #{last.version}'s took here on #{last.compiled_at.strftime("%Y-%m-%d")}"]
                            else
                              [FIRST_COMPILE_GUESS_S, "guessed: a quiet 2-CPU machine's time, none compiled here yet"]
                            end
        Preparation.new(key: "passenger-agent-#{version || "unknown"}", text: "compile #{what} (once for every ruby, " \
                                                                               "then cached)",
                        estimate_s: estimate_s, basis: basis)
      end

      private

      def installed_versions
        Dir.glob(File.join(@gem_dir, "gems", "passenger-*")).filter_map do |dir|
          File.basename(dir).delete_prefix("passenger-") if File.directory?(dir)
        end.select { |v| Gem::Version.correct?(v) }.sort_by { |v| Gem::Version.new(v) }.reverse
      end
    end
  end
end
