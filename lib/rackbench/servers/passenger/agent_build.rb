# frozen_string_literal: true

require "fileutils"
require "tmpdir"
require_relative "../../errors"
require_relative "../../monotonic_clock"
require_relative "../../bundle_env/progress"
require_relative "../../holder_lock"
require_relative "../../cache_root"
require_relative "../../process/long_command"
require_relative "../../rubies/build/progress"
require_relative "agents"

module Rackbench
  module Servers
    # Passenger's agent (PassengerAgent: the watchdog and the C++ core) for
    # the passenger gem of one installed BundleEnv. The gem ships its
    # source, not the binary; Passenger would download a prebuilt one,
    # which rackbench never lets it do. So it is compiled here, offline,
    # with the gem's own `passenger-config compile-agent --optimize`, into
    # the gem's buildout/support-binaries/, where Passenger looks first. The
    # gem's directory is the bundle cache's (one per ruby ABI and passenger
    # version, shared by every app's bundle of that ruby): the compile
    # happens once, and every later trial finds the binary.
    #
    # A cold compile takes minutes (doc/servers.md), so it says how it goes
    # every PROGRESS_INTERVAL_S, as a ruby build does: the objects compiled,
    # the time spent and, once this machine has compiled an agent, how long
    # it is likely still to take (PassengerAgents keeps each compile's
    # time and objects).
    class PassengerAgentBuild
      include MonotonicClock

      AGENT = PassengerAgents::AGENT
      PROGRESS_INTERVAL_S = 15.0
      # Generous: a cold compile took about 9 minutes on a shared 2-CPU machine.
      TIMEOUT_S = 60 * 60
      TAIL_LINES = 5

      # `bin/setup --all`'s step: installs the built-in rack-hello app's
      # bundle with passenger for this ruby (RbConfig.ruby), whose gem
      # directory every app's bundle of this ruby shares, and compiles the
      # agent there, so that no trial (nor CI's test run) waits minutes for
      # it. A plain `bin/setup` leaves it to the first experiment that runs
      # Passenger. Returns :reused, :copied or :compiled.
      def self.setup!(out: $stdout, app: "rack-hello")
        # bin/setup requires this file alone, so Servers (already opened by
        # this file) is not autoloaded: require what this step uses.
        require_relative "../../../rackbench"
        require_relative "../../servers"
        require_relative "../../rubies"
        require_relative "../../apps"
        require_relative "../../bundle_env"
        variant = Rubies.resolve({ ruby: RbConfig.ruby }, installs: [])
        adapter = Servers.fetch("passenger")
        bundle = BundleEnv.new(app_dir: Apps.builtin(app).dir, install: variant.install,
                               gemfile_extra: adapter.gem_lines(variant.install.engine))
        bundle.ensure_installed!(progress: BundleEnv::Progress.new(out: out, label: "  #{app} + passenger"))
        new(bundle).ensure_built!(out: out, log: bundle.log_path)
      end

      # bundle :: an installed BundleEnv whose lockfile locks passenger
      # :shared_root :: where agents are kept for every ruby's gem directory (default: the cache root's
      #                 passenger-agents/, see PassengerAgents)
      def initialize(bundle, timeout_s: TIMEOUT_S, progress_interval_s: PROGRESS_INTERVAL_S,
                     shared_root: File.join(CacheRoot.path, "passenger-agents"))
        @bundle = bundle
        @agents = PassengerAgents.new(root: shared_root)
        @timeout_s = timeout_s
        @progress_interval_s = progress_interval_s
      end

      # The locked passenger version; SetupError when the bundle has none.
      def version
        @bundle.gem_versions.fetch("passenger") do
          raise SetupError, "the bundle #{@bundle.gemfile_path} does not lock the passenger gem"
        end
      end

      # The gem's directory in the bundle.
      def gem_dir
        File.join(@bundle.gem_dir, "gems", "passenger-#{version}")
      end

      # Where the compiled agent lands (PhusionPassenger.support_binaries_dir
      # of a gem install).
      def agent_path
        File.join(gem_dir, "buildout", "support-binaries", AGENT)
      end

      def built?
        File.file?(agent_path) && File.executable?(agent_path)
      end

      # Compiles the agent unless it is there, then Passenger's native
      # support (a C extension of the bundle's ruby, which Passenger would
      # otherwise compile in the first app process of a trial, or download);
      # returns :reused, :copied (from another ruby's gem directory, see
      # #shared_agent_path) or :compiled (the agent). Holds the bundle's install
      # lock meanwhile, so two runs never compile into one gem at once.
      # Raises SetupError with the compiler's last lines and the log's path
      # when a compile fails or times out.
      #
      # :out :: where the progress lines go
      # :log :: the file that receives the compilers' output
      # :tty :: redraw the progress line in place (default: false)
      # :extra_env :: variables added to the compilers' environment (the run's marker; default: {})
      def ensure_built!(out:, log:, tty: false, extra_env: {})
        outcome = :reused
        unless built?
          File.open(@bundle.lock_path, File::RDWR | File::CREAT, 0o644) do |lock|
            HolderLock.acquire(lock, waiting: nil, log: log)
            if built?
              nil
            elsif copy_shared_agent(out)
              outcome = :copied
            else
              duration_s, objects = compile_agent(out, log, tty, extra_env)
              keep_shared_agent
              @agents.record(version, duration_s: duration_s, objects: objects)
              outcome = :compiled
            end
          end
        end
        # An agent compiled before agents were shared serves the other rubies too.
        keep_shared_agent if outcome == :reused && !File.executable?(shared_agent_path)
        build_native_support(log, extra_env)
        outcome
      end

      # The agent is C++ that links no libruby: the one compiled for a
      # passenger version serves every ruby's gem directory (each ABI has
      # its own: ruby-3.1.0, ruby-3.4.0). It is kept once per version and
      # compiler under the cache root (PassengerAgents), and copied into a
      # new gem directory instead of compiled again (minutes each time).
      def shared_agent_path
        @agents.agent_path(version)
      end

      private

      def copy_shared_agent(out)
        shared = shared_agent_path
        return false unless File.executable?(shared)

        FileUtils.mkdir_p(File.dirname(agent_path))
        FileUtils.cp(shared, "#{agent_path}.tmp", preserve: true)
        File.rename("#{agent_path}.tmp", agent_path)
        @agents.used(version)
        out.puts "  Passenger #{version}'s agent copied from #{shared} (compiled once for every ruby)"
        true
      end

      def keep_shared_agent
        @agents.keep(version, agent_path)
      rescue SystemCallError
        nil # the next ruby compiles its own
      end

      # Compiles the agent into the gem; returns [seconds, object files].
      def compile_agent(out, log, tty, extra_env)
        FileUtils.mkdir_p(File.dirname(log))
        last = @agents.last_build
        Dir.mktmpdir("rackbench-passenger-agent") do |work_dir|
          about = last ? "about #{duration(last.duration_s)}, as the last compile here" : "it takes minutes"
          out.puts "Compiling Passenger #{version}'s agent from source, once for every ruby (#{about}; log: #{log})"
          started = now
          argv = ["passenger-config", "compile-agent", "--auto", "--optimize", "--working-dir", work_dir]
          status = run(argv, log, extra_env) do |elapsed_s|
            show(out, tty, progress_text(elapsed_s, objects(work_dir), last))
          end
          check(status, "agent", log)
          raise failure("agent", "finished but left no #{agent_path}", log) unless built?

          elapsed_s = now - started
          compiled = objects(work_dir)
          show(out, tty, "  Passenger #{version}'s agent compiled in #{duration(elapsed_s)} (#{count(compiled)})",
               final: true)
          [elapsed_s, compiled]
        end
      end

      # `passenger-config build-native-support` compiles the extension for
      # the ruby that runs it (the bundle's) into the gem's buildout/ruby/,
      # or says nothing when it is there (about a second).
      def build_native_support(log, extra_env)
        check(run(%w[passenger-config build-native-support], log, extra_env) { nil }, "native support", log)
      end

      def check(status, what, log)
        raise failure(what, "timed out after #{duration(@timeout_s)}", log) unless status
        raise failure(what, "exited with status #{status.exitstatus.inspect}", log) unless status.success?
      end

      # Runs a command of the bundle's passenger gem, its output into log;
      # yields the elapsed seconds every progress interval. Returns the exit
      # status, or nil after a timeout (its process group killed).
      def run(command, log, extra_env, &block)
        FileUtils.mkdir_p(File.dirname(log))
        LongCommand.run(@bundle.exec_prefix + command, env: @bundle.env.merge(extra_env), log: log, chdir: @bundle.dir,
                                                      timeout_s: @timeout_s, interval_s: @progress_interval_s, &block)
      end

      # The object files compiled so far (the compiler's own progress bar is
      # dots without a scale when its output is not a terminal).
      def objects(work_dir)
        Dir.glob(File.join(work_dir, "**", "*.o")).size
      end

      # "  compiling Passenger 6.2.1's agent: 40 of about 92 objects, 1m50s,
      # about 2m10s left" (what is left at the pace of this compile once a
      # tenth is done, else as the last compile took; without a last
      # compile, the objects and the time only).
      def progress_text(elapsed_s, objects, last)
        done = last&.objects&.positive? ? "#{objects} of about #{count(last.objects)}" : count(objects)
        left_s = last && Rubies::Build::Progress.left_s(elapsed_s, objects, last.objects, last.duration_s)
        left = left_s&.positive? ? ", about #{duration(left_s)} left" : ""
        "  compiling Passenger #{version}'s agent: #{done}, #{duration(elapsed_s)}#{left}"
      end

      def show(out, tty, text, final: false)
        if tty
          out.print("\r#{text}\e[K#{"\n" if final}")
        else
          out.puts(text)
        end
        out.flush if out.respond_to?(:flush)
      end

      def failure(part, what, log)
        tail = File.exist?(log) ? File.readlines(log, chomp: true).map(&:strip).reject(&:empty?).last(TAIL_LINES) : []
        SetupError.new("compiling Passenger #{version}'s #{part} #{what} (log: #{log})" +
                       (tail.empty? ? "" : ": #{tail.join(" | ")}"))
      end

      def count(objects)
        objects == 1 ? "1 object" : "#{objects} objects"
      end

      # As the bundle install's progress says it.
      def duration(seconds)
        BundleEnv::Progress.duration(seconds)
      end
    end
  end
end
