# frozen_string_literal: true

require "etc"
require "fileutils"
require "json"
require "time"
require_relative "../../monotonic_clock"
require_relative "../../process/long_command"

module Rackbench
  module Rubies
    module Build
      # Builds one recipe into a cache directory, as ruby-build does but
      # with rackbench's own steps (doc/rubies.md says why): the source
      # unpacked (never built in the user's own tree), checked to be Ruby,
      # patched, the machine checked for what the build needs, the bundled
      # gems fetched, configure, make, make install into a staging
      # directory, then moved into place and checked: the new ruby runs and
      # loads the extensions every app needs. Each step is printed as it
      # starts and logs into a file of its own, named in any failure.
      class Builder
        include MonotonicClock

        # Generous deadlines: make took about 4 minutes on 2 CPUs here, and
        # three times that on a loaded machine.
        TIMEOUT_S = { "unpack" => 600, "patch" => 300, "bundled gems" => 900, "autogen" => 900,
                      "configure" => 1800, "make" => 7200, "install" => 3600, "check" => 300 }.freeze
        TAIL_LINES = 3
        # Debian's ccache puts compiler names here that call the compiler
        # through ccache: first on PATH, they cache every object file, so a
        # patched build recompiles only the files its patches touch (a
        # Ruby core developer's loop). Configure still records plain
        # `gcc`, so the installed ruby never needs ccache afterwards.
        CCACHE_WRAPPERS = "/usr/lib/ccache"

        # The version a source tree declares, or nil when it is not Ruby's.
        def self.source_version(dir)
          api = File.read(File.join(dir, "include", "ruby", "version.h"))
          own = File.read(File.join(dir, "version.h"))
          major = api[/^#\s*define\s+RUBY_API_VERSION_MAJOR\s+(\d+)/, 1]
          minor = api[/^#\s*define\s+RUBY_API_VERSION_MINOR\s+(\d+)/, 1]
          teeny = own[/^#\s*define\s+RUBY_VERSION_TEENY\s+(\d+)/, 1]
          "#{major}.#{minor}.#{teeny}" if major && minor && teeny
        rescue SystemCallError
          nil
        end

        # recipe :: the Recipe; cache :: the Cache; progress :: a Progress
        # :parent_env :: the environment the steps start from (default: ENV)
        # :jobs :: make's parallel jobs (default: the CPUs this process may use)
        def initialize(recipe, cache:, progress:, parent_env: ENV, jobs: Etc.nprocessors)
          @recipe = recipe
          @cache = cache
          @progress = progress
          @env = recipe.step_env(parent_env)
          @key = recipe.key
          @ccache = ccache?(parent_env)
          if @ccache
            # Each build compiles in a work directory of its own (key and
            # pid in its name): with it as the base directory, ccache
            # hashes the paths under it relative, and leaves the working
            # directory out of the hash, so two builds of one source share
            # their objects (without this, 5% of the calls hit).
            @env = @env.merge("PATH" => "#{CCACHE_WRAPPERS}:#{@env["PATH"]}", "CCACHE_DIR" => cache.ccache_dir,
                              "CCACHE_BASEDIR" => cache.work_dir(@key), "CCACHE_NOHASHDIR" => "true")
          end
          @jobs = jobs
          @timings = cache.timings
        end

        # Builds into dir (the cache's directory of the key, which must not
        # exist): dir/prefix, then the record that marks it complete.
        # Raises BuildError; leaves no partial dir behind.
        def build(dir)
          @work = @cache.work_dir(@key)
          @logs = @cache.log_dir(@key)
          [@work, @logs].each { |d| FileUtils.rm_rf(d) }
          FileUtils.mkdir_p([@work, @logs, src])
          @durations = {}
          started = now
          @progress.start(ruby: @recipe.name, summary: @recipe.summary, steps: steps, logs: @logs)
          steps.each_with_index { |name, i| run_step(i + 1, name) }
          finish(dir, now - started)
        rescue StandardError, Interrupt
          FileUtils.rm_rf(dir)
          raise
        ensure
          FileUtils.rm_rf(@work) if @work
        end

        private

        # ccache when Debian's package is installed, unless
        # RACKBENCH_CCACHE=0. Its objects are those the compiler makes, so
        # it is no part of the recipe's key.
        def ccache?(parent_env)
          File.directory?(CCACHE_WRAPPERS) && parent_env["RACKBENCH_CCACHE"] != "0"
        end

        def steps
          @steps ||= ["unpack", *("patch" unless @recipe.patches.empty?), "bundled gems", "configure", "make",
                      "install", "check"]
        end

        def src = File.join(@work, "src")
        def stage = File.join(@work, "stage")
        def log(index, name) = File.join(@logs, format("%02d-%s.log", index, name.tr(" ", "-")))

        def run_step(index, name)
          @progress.step(index, name)
          @log = log(index, name)
          FileUtils.touch(@log)
          started = now
          send("step_#{name.tr(" ", "_")}")
          @durations[name] = now - started
          @timings.record(name, duration_s: @durations[name], lines: File.foreach(@log).count)
        end

        def step_unpack
          @recipe.source.unpack_into(src, log: @log)
          @version = self.class.source_version(src)
          fail!("source #{@recipe.source.path} is not a Ruby source tree (no Ruby version in include/ruby/version.h " \
                "and version.h)", log: false) unless @version
          File.write(@log, "# ruby #{@version} from #{@recipe.source.to_s}\n", mode: "a")
          # The machine's part is checked now, before minutes go into a
          # build that would stop at configure or ship without psych.
          Preflight.check!(env: @env, ruby: @recipe.name, needs_autoconf: !File.exist?(File.join(src, "configure")),
                           needs_patch: !@recipe.patches.empty?)
        end

        def step_patch
          Patches.apply(@recipe.patches, dir: src, log: @log, env: @env, ruby: @recipe.name)
        end

        def step_bundled_gems
          fetched = BundledGems.fetch(src, log: @log, env: @env, ruby: @recipe.name, kept_in: @cache.bundled_gems_dir)
          File.write(@log, "# #{fetched} bundled gem(s) fetched through RubyGems\n", mode: "a")
        end

        def step_configure
          command!(["./autogen.sh"], "autogen") unless File.exist?(File.join(src, "configure"))
          command!(["./configure", "--prefix=#{@cache.prefix(@key)}", *@recipe.configure_args], "configure")
          yjit = File.read(@log)[/^\s*\* YJIT support:\s*(\S+)/, 1]
          File.write(@log, "# YJIT: #{yjit || "not reported"}\n", mode: "a")
        end

        def step_make
          command!(["make", "-j#{@jobs}"], "make")
        end

        def step_install
          command!(["make", "install", "DESTDIR=#{stage}"], "make install")
        end

        # The staged install is moved to its prefix (the path compiled into
        # it), then run from there: it must start, and load the extensions
        # every benchmarked app needs.
        def step_check
          dir = @cache.dir(@key)
          FileUtils.mkdir_p(dir)
          File.rename(File.join(stage, @cache.prefix(@key)), @cache.prefix(@key))
          missing = Preflight.unloadable_extensions(@cache.ruby_path(@key), env: @env)
          return if missing.empty?

          packages = missing.map(&:last).uniq
          fail!("the built ruby cannot load #{missing.map(&:first).join(", ")}: install the Debian " \
                "package#{"s" if packages.size > 1} #{packages.join(" ")} and build again")
        end

        # Writes the record that marks the build complete, in the install
        # (for the identity agent) and beside it.
        def finish(dir, duration_s)
          record = @recipe.to_h.merge("version" => @version, "prefix" => @cache.prefix(@key),
                                      "built_at" => Time.now.utc.iso8601, "duration_s" => duration_s.round(1),
                                      "steps_s" => @durations.transform_values { |s| s.round(1) }, "logs" => @logs,
                                      "ccache" => @ccache,
                                      "rackbench_version" => Rackbench::VERSION)
          text = JSON.pretty_generate(record)
          File.write(File.join(@cache.prefix(@key), Cache::INSTALL_RECORD), text)
          File.write(File.join(dir, "#{Cache::RECORD}.tmp"), text)
          File.rename(File.join(dir, "#{Cache::RECORD}.tmp"), File.join(dir, Cache::RECORD))
          @progress.finish("built ruby #{@version} in #{BundleEnv::Progress.duration(duration_s)}: " \
                           "#{@cache.ruby_path(@key)}")
          record
        end

        def command!(argv, what)
          status = LongCommand.run(argv, env: @env, log: @log, chdir: src, timeout_s: TIMEOUT_S.fetch(what.split.last, 3600),
                                         interval_s: @progress.interval_s, unsetenv_others: true) do |elapsed_s|
            @progress.update(elapsed_s, File.foreach(@log).count)
          end
          fail!("#{what} timed out after #{BundleEnv::Progress.duration(TIMEOUT_S.fetch(what.split.last, 3600))}") unless status
          fail!("#{what} failed (exit status #{status.exitstatus.inspect})") unless status.success?
        rescue SystemCallError => e
          fail!("cannot run #{argv.first}: #{e.message.sub(/ @ \w+/, "")}")
        end

        def fail!(message, log: true)
          tail = log ? error_lines : []
          raise BuildError, "ruby '#{@recipe.name}' build: #{message}" \
                            "#{" (log: #{@log})" if log}#{": #{tail.join(" | ")}" unless tail.empty?}"
        end

        # The lines of the step's log that say what went wrong: the last
        # ones mentioning an error, else the last lines.
        def error_lines
          lines = File.readlines(@log, chomp: true).map(&:strip).reject { |l| l.empty? || l.start_with?("# ") }
          errors = lines.grep(/error|not found|cannot|No such/i)
          (errors.empty? ? lines : errors).last(TAIL_LINES)
        rescue SystemCallError
          []
        end
      end
    end
  end
end
