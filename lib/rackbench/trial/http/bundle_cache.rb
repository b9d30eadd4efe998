# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # The Bundler environments of one run, keyed by (app, ruby install,
      # server): each is installed at most once per run, and an install that
      # failed is remembered, so the remaining trials of that combination fail
      # at once with the same reason instead of retrying a slow install every
      # time. Variants of one install share an environment, which holds no
      # variant state (see BundleEnv): the trial adds its variant's options
      # and variables.
      class BundleCache
        # :root :: cache directory of the environments (default: BundleEnv.default_root)
        # :out :: where to say that an install is starting (it can take minutes)
        # :marker_env :: variables marking the installs as the run's processes (Watchdog.marker_env; default: {})
        # :parent_env :: the shell's environment: Bundler's commands start from it (cleaned, see BundleEnv#env),
        #                and its BUNDLE_WITHOUT/BUNDLE_WITH are read (BundleEnv::Groups) (default: ENV)
        # :extra_gem_lines :: Gemfile lines every environment of the run gets besides the server's, e.g. the
        #                     profiler of a profiled experiment (Profile::Settings#gem_lines; default: [])
        # :user :: the run's results directory, recorded with each environment it uses (`rackbench cache`;
        #          default: nil)
        def initialize(root: nil, out: $stdout, marker_env: {}, parent_env: ENV, extra_gem_lines: [], user: nil)
          @root = root
          @user = user
          @extra_gem_lines = extra_gem_lines
          @out = out
          @marker_env = marker_env
          @parent_env = parent_env
          @entries = {}
          @install_s = {}
        end

        # The installed BundleEnv for app (an App), the ruby install (a
        # Rubies::Install) and adapter; raises SetupError when it cannot be
        # installed.
        #
        # :pins :: gem name => requirement the experiment pins (gems:) (default: {})
        # :set :: the installed BundleEnv of the gem set this environment belongs to, resolved by another
        #         ruby (GemSets): this one starts from its lockfile and must lock every gem of it at the
        #         same version, or raises SetupError naming the first that differs (default: nil)
        def fetch(app, install, adapter, log_dir:, pins: {}, set: nil)
          key = [app.dir, app.builtin, app.bundle_without, install.path, install.description, adapter.name,
                 pins.sort, set&.dir]
          entry = (@entries[key] ||= install_bundle(app, install, adapter, log_dir, pins, set))
          raise entry if entry.is_a?(SetupError)

          entry
        end

        # Seconds the install (or the check that it was already there) of
        # bundle took in this run, nil for one this cache did not make.
        def install_s(bundle)
          @install_s[bundle.dir]
        end

        private

        # Redraw progress in place only on a terminal, and never under CI
        # (whose logs keep every carriage return).
        def tty?
          @out.respond_to?(:tty?) && @out.tty? && !@parent_env.key?("CI")
        end

        def install_bundle(app, ruby, adapter, log_dir, pins, set)
          started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
          groups = BundleEnv::Groups.for_app(app_dir: app.dir, builtin: app.builtin,
                                             bundle_without: app.bundle_without, parent_env: @parent_env)
          options = { app_dir: app.dir, install: ruby, gemfile_extra: adapter.gem_lines(ruby.engine) + @extra_gem_lines,
                      groups: groups, parent_env: @parent_env,
                      gem_pins: pins.transform_values { |requirement| Experiment::Gems.parts(requirement) },
                      lock_seed: set&.lockfile_text }
          options[:root] = @root if @root
          bundle = BundleEnv.new(**options)
          # Pinned gems (a gem.NAME dimension) make environments of their own.
          pinned = pins.sort.map { |name, requirement| "#{name} #{requirement}" }
          slug = ["bundle", app.name, ruby.name, adapter.name, *pinned].join("-")
          log = File.join(log_dir, "#{slug.gsub(/[^\w.-]+/, "_")}.log")
          label = "#{app.name} + #{adapter.name}#{" (#{pinned.join(", ")})" unless pinned.empty?} on #{ruby.name}"
          bundle.ensure_installed!(
            log: log, extra_env: @marker_env,
            before_install: ->(_) { @out.puts "Installing gems for #{label} (log: #{log})" },
            waiting: lambda do |holder, waited_s|
              @out.puts LockNotice.text(holder, waited_s, ruby: ruby.name, lock: bundle.lock_path)
            end,
            progress: BundleEnv::Progress.new(out: @out, label: "  #{label}", tty: tty?), user: @user
          )
          check_set!(bundle, set, log, app.name) if set
          # What the server needs built once per installed bundle (Passenger's
          # agent); optional in the adapter interface (Servers).
          if adapter.respond_to?(:prepare_bundle)
            adapter.prepare_bundle(bundle, out: @out, log: log, tty: tty?, extra_env: @marker_env)
          end
          @install_s[bundle.dir] = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
          bundle
        rescue SetupError => e
          what = set ? "the gem set of #{app.name} + #{adapter.name} (resolved on #{GemSets.ruby_name(set.install)})" \
                     : "gems for #{app.name} + #{adapter.name}"
          SetupError.new("cannot install #{what} on #{GemSets.ruby_name(ruby)}: #{e.message}")
        end

        # The environment locks every gem of its set at the set's version
        # (Bundler re-resolves a seeded lock it cannot keep, e.g. for a gem
        # whose required_ruby_version this ruby does not meet). What it adds
        # beyond the set is said, not refused.
        def check_set!(bundle, set, log, app_name)
          differences = GemSets.differences(set.gem_versions, bundle.gem_versions)
          unless differences.empty?
            raise SetupError, "#{GemSets.describe_differences(differences)}; `gems: per_ruby` lets each ruby " \
                              "resolve its own (log: #{log})"
          end
          added = bundle.gem_versions.keys - set.gem_versions.keys
          return if added.empty?

          @out.puts "  #{GemSets.ruby_name(bundle.install)} adds to the gem set of #{app_name}: " \
                    "#{added.map { |name| "#{name} #{bundle.gem_versions[name]}" }.join(", ")}"
        end
      end
    end
  end
end
