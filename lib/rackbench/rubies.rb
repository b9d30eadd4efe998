# frozen_string_literal: true

module Rackbench
  # The Ruby installations rackbench can benchmark, and the variants an
  # experiment builds from them (a ruby plus options such as --yjit and
  # environment such as LD_PRELOAD). See doc/rubies.md.
  #
  #   installs = Rackbench::Rubies.discover
  #   variant = Rackbench::Rubies.resolve({ name: "yjit", ruby: "ruby", options: ["--yjit"] }, installs: installs)
  #   variant.command # => ["/usr/bin/ruby3.1", "--yjit"]
  module Rubies
    autoload :Child, File.expand_path("rubies/child", __dir__)
    autoload :CleanEnv, File.expand_path("rubies/clean_env", __dir__)
    autoload :Install, File.expand_path("rubies/install", __dir__)
    autoload :Locator, File.expand_path("rubies/locator", __dir__)
    autoload :Prober, File.expand_path("rubies/prober", __dir__)
    autoload :ProbeCache, File.expand_path("rubies/probe_cache", __dir__)
    autoload :Resolver, File.expand_path("rubies/resolver", __dir__)
    autoload :Variant, File.expand_path("rubies/variant", __dir__)
    autoload :MallocLibrary, File.expand_path("rubies/malloc_library", __dir__)
    autoload :Build, File.expand_path("rubies/build", __dir__)

    # JRuby needs several seconds to start on a small machine, and on a
    # machine busy with other work describing a ruby has taken over 30 s:
    # give a probe ample time before calling the ruby broken (one that
    # cannot start at all fails at once).
    PROBE_TIMEOUT_S = 120.0

    # Finds the rubies installed on this machine and describes each by
    # running it. Returns an Array of Install in discovery order: the
    # `ruby`, `jruby` and `truffleruby` on PATH, then rbenv, chruby,
    # asdf, mise and rvm installs, then extra_paths. A path in extra_paths
    # is run as itself; a ruby found through PATH or a manager stands for
    # the interpreter behind it (see Prober). Installs are deduplicated by
    # what runs (Install#identity: the file exec'd, its process image, its
    # libruby and its description), never by the RbConfig.ruby a ruby
    # reports, so a shim on PATH and the install it points to appear once
    # (under the PATH name) while a relocated build or a copy of another
    # ruby is listed on its own. A ruby that cannot run is included with
    # Install#error set to the reason.
    #
    # :env :: environment to search (PATH, RBENV_ROOT, ...) and to run the probes with, minus variables that would leak into another ruby (default: ENV)
    # :home :: home directory holding ~/.rbenv, ~/.rubies, ... (default: Dir.home)
    # :extra_paths :: interpreters or install directories named explicitly (default: [])
    # :probe_timeout_s :: how long one ruby may take to describe itself (default: 120)
    def self.discover(env: ENV, home: Dir.home, extra_paths: [], probe_timeout_s: PROBE_TIMEOUT_S)
      # PATH as it was before any `bundle exec` that runs rackbench.
      candidates = Locator.new(env: CleanEnv.clean(env), home: home).candidates(extra_paths: extra_paths)
      prober = Prober.new(env: env, timeout_s: probe_timeout_s)
      cache = ProbeCache.from_env(env) # opt-in: RACKBENCH_PROBE_CACHE
      # Probes run in parallel: each is a separate process and JRuby's
      # start-up dominates; the wall time is that of the slowest ruby.
      installs = candidates.map do |candidate|
        Thread.new { cache ? cache.fetch(candidate) { prober.describe(candidate) } : prober.describe(candidate) }
      end.map(&:value)
      cache&.save
      name_uniquely(dedupe(installs))
    end

    # Turns an experiment's ruby entry into a Variant. spec is a Hash with
    # :ruby (an install name such as "ruby" or "ruby-3.3.0", a version such
    # as "3.1.2" or "3.1", or an absolute path), and optional :name (the
    # label results are stored under), :options (interpreter options, e.g.
    # ["--yjit"]) and :env (variables for the server, e.g.
    # { "MALLOC_ARENA_MAX" => "2" }); string keys work too. A String spec
    # means { ruby: spec }. Raises ConfigError for an unknown ruby or an
    # option the ruby cannot take, SetupError when the matching ruby does
    # not run.
    #
    # :installs :: the result of discover
    # :env :: environment for probing an absolute path that discover did not find (default: ENV)
    def self.resolve(spec, installs:, env: ENV, probe_timeout_s: PROBE_TIMEOUT_S)
      Resolver.new(installs, env: env, probe_timeout_s: probe_timeout_s).resolve(spec)
    end

    # Resolves an experiment's ruby entries at once, label => Variant, in
    # their order. The entries with a :build (a Build::Recipe) are built
    # first, or taken from the cache, and become installs named after
    # their label, which other entries may name in :ruby (a variant of a
    # built ruby). Raises as .resolve does, and BuildError for a build that
    # fails: always before any trial.
    #
    # :installs :: the result of discover
    # :out :: where build progress goes (default: $stdout)
    # :user :: the results directory of the run, recorded with each build it uses (default: nil)
    # :env :: as for .resolve, and the environment builds start from (default: ENV)
    def self.resolve_all(specs, installs:, out: $stdout, user: nil, env: ENV, probe_timeout_s: PROBE_TIMEOUT_S)
      built = specs.select { |spec| spec[:build] }.map do |spec|
        install = Build.install(spec[:build], out: out, user: user, parent_env: env, probe_timeout_s: probe_timeout_s)
        clash = installs.find { |i| i.name == install.name }
        if clash
          raise ConfigError, "ruby '#{install.name}' is built from source, but an installed ruby has that name " \
                             "(#{clash.path}): give the build another name"
        end
        install
      end
      all = installs + built
      specs.to_h do |spec|
        variant = resolve(spec.except(:build), installs: all, env: env, probe_timeout_s: probe_timeout_s)
        [variant.name, variant]
      end
    end

    # Keeps the first Install seen for each identity.
    def self.dedupe(installs)
      installs.uniq(&:identity)
    end
    private_class_method :dedupe

    # installs with unique names, in the same order: PATH rubies keep their
    # command name, others are "<engine>-<version>"; a clash gets
    # "@<source>" and then a counter appended. Earlier installs keep their
    # names, so appending one and naming the list again renames only the
    # newcomer.
    def self.name_uniquely(installs)
      taken = {}
      installs.map do |install|
        name = install.name
        name = "#{install.name}@#{install.source}" if taken[name]
        name = "#{install.name}@#{install.source}-#{(2..).find { |i| !taken["#{name}-#{i}"] }}" if taken[name]
        taken[name] = true
        name == install.name ? install : install.with(name: name)
      end
    end
  end
end
