# frozen_string_literal: true

require_relative "gem_set_check"

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
        #         same version, or raises SetupError naming the first that differs (GemSetCheck); what it
        #         runs otherwise (platforms, build dependencies) is said (default: nil)
        # :force_ruby_platform :: every native gem from its source gem (`gems: { force_ruby_platform: true }`,
        #                         BundleEnv) (default: false)
        def fetch(app, install, adapter, log_dir:, pins: {}, set: nil, force_ruby_platform: false)
          key = [app.dir, app.builtin, app.bundle_without, install.path, install.description, adapter.name,
                 pins.sort, set&.dir, force_ruby_platform]
          entry = (@entries[key] ||= install_bundle(app, install, adapter, log_dir, pins, set, force_ruby_platform))
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

        def install_bundle(app, ruby, adapter, log_dir, pins, set, force_ruby_platform)
          started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
          groups = BundleEnv::Groups.for_app(app_dir: app.dir, builtin: app.builtin,
                                             bundle_without: app.bundle_without, parent_env: @parent_env)
          options = { app_dir: app.dir, install: ruby, gemfile_extra: adapter.gem_lines(ruby.engine) + @extra_gem_lines,
                      groups: groups, parent_env: @parent_env,
                      gem_pins: pins.transform_values { |requirement| Experiment::Gems.parts(requirement) },
                      lock_seed: set&.lockfile_text, force_ruby_platform: force_ruby_platform }
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
          set ? check_set!(bundle, set, log, app.name) : say_lock_changes(bundle, app.name)
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
        # whose required_ruby_version this ruby does not meet), or refuses
        # in one line (GemSetCheck#refusal). What it runs otherwise (another
        # platform of a gem, build dependencies, gems it adds) is said.
        def check_set!(bundle, set, log, app_name)
          check = GemSetCheck.new(BundleEnv::LockComparison.new(set.lockfile_text, bundle.lockfile_text),
                                  ruby: GemSets.ruby_name(bundle.install), force_ruby_platform: bundle.force_ruby_platform?)
          raise SetupError, "#{check.refusal} (log: #{log})" unless check.holds?

          check.notes.each { |note| @out.puts "  #{app_name}: #{note}" }
        end

        # An environment that resolves on its own (the set's own, or any
        # with `gems: per_ruby`) starts from the app's Gemfile.lock, when it
        # has one: what Bundler changed of it on this ruby is said
        # (GemSetCheck#changes).
        def say_lock_changes(bundle, app_name)
          app_lock = bundle.app_lockfile_text
          return unless app_lock

          check = GemSetCheck.new(BundleEnv::LockComparison.new(app_lock, bundle.lockfile_text),
                                  ruby: GemSets.ruby_name(bundle.install), reference: "the app's Gemfile.lock",
                                  force_ruby_platform: bundle.force_ruby_platform?)
          check.changes.each { |line| @out.puts "  #{app_name}: #{line}" }
        end
      end
    end
  end
end
