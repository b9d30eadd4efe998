# frozen_string_literal: true

require "digest"
require_relative "errors"
require_relative "duration"
# Declared before its parts load: they reopen it, and must not trigger the
# autoload of this very file.
module Rackbench
  class Experiment; end
end
require_relative "experiment/checker"
require_relative "experiment/yaml_source"
require_relative "experiment/canonical"
require_relative "experiment/entries"
require_relative "experiment/settings"
require_relative "experiment/websocket_load"
require_relative "experiment/gems"
require_relative "experiment/config"
require_relative "experiment/matrix"
require_relative "experiment/derive"
require_relative "tune/settings"
require_relative "capacity/settings"

module Rackbench
  # A validated, frozen experiment: what to benchmark (rubies, servers,
  # apps), how (processes, threads, load, env), how often (batches) and in
  # which order (seed). The file format is specified in doc/experiment.md.
  #
  #   experiment = Rackbench::Experiment.load("experiment.yml")
  #   experiment.configurations.size  # => 8
  #   plan = Rackbench::Experiment::Plan.new(experiment, unsupported: ->(config) { ... })
  #
  # Every mistake in the file raises ConfigError as one line that names the
  # file and the key.
  class Experiment
    autoload :Plan, File.expand_path("experiment/plan", __dir__)

    TOP_KEYS = %w[name seed batches rubies servers apps processes threads load env pass_env exclude inside profile
                  tune proxy capacity gems measure instructions].freeze
    REQUIRED_KEYS = %w[name servers apps].freeze
    NAME = /\A[a-z0-9._-]+\z/
    # What the in-server agent does in every trial (`inside:`): count GC,
    # allocations, VM and JIT figures and memory over the window
    # (agent/inside.rb), or nothing (no agent is loaded).
    INSIDE_MODES = %w[counting off].freeze
    DEFAULT_INSIDE = "counting"

    # The server adapters accepted when Rackbench::Servers cannot say.
    KNOWN_SERVERS = %w[puma webrick unicorn pitchfork falcon thin iodine agoo passenger].freeze

    # The built-in quick experiment that `rackbench run` runs without a file.
    DEFAULT_PATH = File.expand_path("default_experiment.yml", __dir__)

    # Where the built-in apps live (one directory per app).
    APPS_DIR = File.expand_path("../../apps", __dir__)

    # The name, seed (Integer), batches (Integer) and rubies, servers and
    # apps (Arrays of RubySpec, ServerSpec, AppSpec) as normalized from the
    # file; processes and threads (Arrays of Integer); load (Hash of key =>
    # Array of values, defaults filled in); env (Hash of name => Array of
    # String); pass_env (Array of variable names the servers take from the
    # shell); exclude (Array of Hash of dimension => Array of values);
    # inside (one of INSIDE_MODES); proxy (the topologies in front of the
    # server: Array of Proxy.names, ["none"] without the key); measure
    # (what the trials measure: Instructions::MEASURES, time and/or
    # instructions, in that order; ["time"] without the key).
    attr_reader :name, :seed, :batches, :rubies, :servers, :apps, :processes, :threads, :load, :env, :pass_env,
                :exclude, :inside, :proxy, :measure
    # How its instructions trials run under callgrind (`instructions:`, an
    # Instructions::Settings: the cache simulation).
    attr_reader :instructions_settings
    # How the apps' gems are resolved across the rubies, and the gems it
    # pins or varies (`gems:`, an Experiment::Gems), or nil: one gem set per
    # app and server, nothing pinned.
    attr_reader :gems
    # The profiler of its profiled trials (a Profile::Settings), or nil:
    # no trial is profiled.
    attr_reader :profile
    # The capacity search's settings (`capacity:`, a Capacity::Settings),
    # or nil: the file has no capacity section (`rackbench capacity`).
    attr_reader :capacity
    # Whether only the profiled trials run (`rackbench profile`): true or
    # false (never so from a file).
    attr_reader :profile_only
    # What `rackbench tune` searches (Tune::Settings), or nil: the file
    # has no +tune:+ section.
    attr_reader :tune
    # The file's text as read, kept to store beside the results.
    attr_reader :source_text
    # How errors name the file (the path as given).
    attr_reader :source
    # The directory the file's relative paths (apps' path, load.requests)
    # were resolved against: a derived experiment (#derive) resolves its
    # own against the same one.
    attr_reader :base_dir
    # Hash of dimension name => Array of values (see Matrix).
    attr_reader :dimensions
    # Every configuration of the matrix, excludes removed (Array of Config).
    attr_reader :configurations
    # SHA-256 (hex) of the canonical JSON of the normalized experiment:
    # equal for files that differ only in comments, spelling ("10" vs
    # "10s"), key order, list order or defaults written out; different as
    # soon as anything that changes the trials differs. Resume uses it to
    # recognise the same experiment.
    attr_reader :fingerprint

    class << self
      # Reads and validates the experiment file at +path+. Relative paths
      # inside the file (apps' path, load.requests) are resolved against the
      # file's directory. Options as for .parse.
      def load(path, **options)
        text = begin
          File.read(path)
        rescue Errno::ENOENT, Errno::ENOTDIR
          raise ConfigError, "experiment file not found: #{path}"
        rescue Errno::EISDIR
          raise ConfigError, "experiment file is a directory: #{path}"
        rescue SystemCallError => e
          raise ConfigError, "cannot read experiment file #{path}: #{e.message}"
        end
        parse(text, source: path, base_dir: File.dirname(File.expand_path(path)), **options)
      end

      # Validates the YAML +text+ of an experiment.
      #
      # :source :: how errors name the file (default: "experiment.yml")
      # :base_dir :: directory relative paths are resolved against
      #              (default: the current directory)
      # :known_servers :: adapter names accepted in +servers+ (default:
      #                   .known_servers)
      # :known_apps :: built-in app names, or nil to accept any name
      #                (default: .builtin_apps)
      # :option_schemas :: callable: adapter name => the options it accepts
      #                    (see Entries), or nil (default: .option_schemas)
      def parse(text, source: "experiment.yml", base_dir: Dir.pwd, known_servers: self.known_servers,
                known_apps: builtin_apps, option_schemas: self.option_schemas)
        checker = Checker.new(source)
        data = YAMLSource.load(text, checker)
        checker.keys!(data, TOP_KEYS, nil, required: REQUIRED_KEYS)
        entries = Entries.new(checker, base_dir: base_dir, known_servers: known_servers.map(&:to_s),
                                       known_apps: known_apps&.map(&:to_s), option_schemas: option_schemas)
        settings = Settings.new(checker, base_dir: base_dir)
        parts = parts(data, checker, entries, settings)
        matrix = Matrix.new(checker, settings, parts, data.fetch("exclude", Matrix::NO_EXCLUDE))
        check_measure(parts[:measure], matrix.configurations, checker)
        check_websocket(parts, checker)
        new(**parts, exclude: matrix.exclude, dimensions: matrix.dimensions, configurations: matrix.configurations,
                     source: source, source_text: text, base_dir: File.expand_path(base_dir))
      end

      # The built-in quick experiment (lib/rackbench/default_experiment.yml).
      def default(**options)
        load(DEFAULT_PATH, **options)
      end

      # Adapter names: from the server adapter registry when it is loaded
      # or can be autoloaded, else KNOWN_SERVERS.
      def known_servers
        if Rackbench.const_defined?(:Servers) && Rackbench::Servers.respond_to?(:names)
          Rackbench::Servers.names.map(&:to_s)
        else
          KNOWN_SERVERS
        end
      end

      # What each adapter accepts in +options+: a callable that asks the
      # server adapter registry (Servers.option_schema) when it is loaded or
      # can be autoloaded, else one that answers nil, which leaves the
      # options to the adapter's own check when a trial's command is built.
      def option_schemas
        if Rackbench.const_defined?(:Servers) && Rackbench::Servers.respond_to?(:option_schema)
          ->(name) { Rackbench::Servers.option_schema(name) }
        else
          ->(_name) {}
        end
      end

      # Built-in app names: from Rackbench::Apps when it is loaded or can
      # be autoloaded, else the directories under APPS_DIR, else nil (no
      # apps directory: any name is accepted).
      def builtin_apps
        return Rackbench::Apps.names.map(&:to_s) if Rackbench.const_defined?(:Apps) && Rackbench::Apps.respond_to?(:names)
        return nil unless File.directory?(APPS_DIR)

        Dir.children(APPS_DIR).select { |name| File.directory?(File.join(APPS_DIR, name)) }.sort
      end

      private

      def parts(data, checker, entries, settings)
        processes = settings.counts(data.fetch("processes", 1), "processes")
        threads = settings.counts(data.fetch("threads", 1), "threads")
        batches = checker.integer!(data.fetch("batches", 1), "batches", min: 1)
        measure = measure(data.fetch("measure", Instructions::TIME), checker)
        {
          name: checker.pattern!(data["name"], "name", NAME, "experiment name ([a-z0-9._-])"),
          seed: checker.integer!(data.fetch("seed", 1), "seed", min: 0),
          batches: batches,
          profile: Profile::Settings.parse(data["profile"], checker, batches: batches),
          rubies: entries.rubies(data.fetch("rubies", ["ruby"])),
          servers: entries.servers(data["servers"]),
          apps: entries.apps(data["apps"]),
          processes: processes,
          threads: threads,
          load: settings.load(data.fetch("load", {}), processes: processes, threads: threads,
                                                      instructions: measure.include?(Instructions::INSTRUCTIONS)),
          env: settings.env(data.fetch("env", {})),
          pass_env: settings.pass_env(data.fetch("pass_env", [])),
          inside: inside(data.fetch("inside", DEFAULT_INSIDE), checker),
          tune: Tune::Settings.parse(data["tune"], checker),
          proxy: proxy(data.fetch("proxy", Proxy::NONE), checker),
          capacity: capacity(data, checker),
          gems: Gems.parse(data["gems"], checker),
          measure: measure,
          instructions_settings: Instructions::Settings.parse(data["instructions"], checker, measure: measure)
        }
      end

      # `measure:` time, instructions, or both as a list; kept in
      # Instructions::MEASURES order.
      def measure(value, checker)
        names = checker.list!(value, "measure") do |name, key|
          checker.one_of!(name, key, Instructions::MEASURES, "measure")
        end
        Instructions::MEASURES.select { |name| names.include?(name) }.freeze
      end

      # An instructions window is a fixed count of requests: under valgrind
      # a duration means very different work per configuration, whose
      # speed depends on the instrumentation. The capacity search drives
      # open-loop rates, which a count (closed loop) cannot be.
      def check_measure(measure, configurations, checker)
        return unless measure.include?(Instructions::INSTRUCTIONS)

        if configurations.any? { |config| config.load[:count].nil? }
          checker.fail!("measure", "instructions needs load.count (a window of N requests, e.g. load: { count: 2000 }): " \
                                   "under valgrind a duration is very different work per configuration")
        end
        problem = configurations.lazy.filter_map { |config| Instructions::SettingsCheck.problem(config) }.first
        checker.fail!(*problem) if problem
      end

      # A WebSocket workload runs against the server itself, under no
      # valgrind: the proxies' configurations and the instructions' fixed
      # count are HTTP's.
      def check_websocket(parts, checker)
        return unless parts[:load]["workload"].any? { |w| WebSocketLoad::WEBSOCKET.include?(w) }

        if parts[:measure].include?(Instructions::INSTRUCTIONS)
          checker.fail!("measure", "instructions counts HTTP requests (load.count): not a WebSocket workload")
        end
        return if parts[:proxy] == [Proxy::NONE]

        checker.fail!("proxy", "a WebSocket workload goes to the server itself: a proxy in front is not supported yet")
      end

      # The capacity: section, or nil. Its steps set load.rate, so the file
      # may not (it would be silently replaced).
      def capacity(data, checker)
        return nil unless data.key?("capacity")

        load = data["load"].is_a?(Hash) ? data["load"] : {}
        workloads = Array(load.fetch("workload", "http"))
        return broadcast_capacity(data, load, workloads, checker) if workloads.any? { |w| WebSocketLoad::WEBSOCKET.include?(w) }

        unless load["rate"].nil?
          checker.fail!("load.rate", "cannot be set with capacity: (the search sets each step's rate; " \
                                     "use capacity.start_rate and capacity.max_rate)")
        end
        Capacity::Settings.parse(data["capacity"], checker)
      end

      # A WebSocket experiment's capacity is a broadcast's: the most
      # clients that hold its round trip's target; the search sets each
      # step's clients.
      def broadcast_capacity(data, load, workloads, checker)
        unless workloads == ["broadcast"]
          checker.fail!("capacity", "of a WebSocket workload searches the clients a broadcast reaches: it needs " \
                                    "load.workload broadcast, not #{workloads.join(", ")}")
        end
        if load.key?("clients")
          checker.fail!("load.clients", "cannot be set with capacity: (the search sets each step's clients; " \
                                        "use capacity.start_clients and capacity.max_clients)")
        end
        Capacity::Settings.parse(data["capacity"], checker, broadcast: true)
      end

      # YAML reads an unquoted off (and on) as a boolean.
      def inside(value, checker)
        value = { false => "off", true => "on" }.fetch(value, value)
        checker.one_of!(value, "inside", INSIDE_MODES, "inside mode")
      end

      # `proxy:` one topology name or a list of them (a list of several is
      # the dimension "proxy").
      def proxy(value, checker)
        checker.list!(value, "proxy") { |name, key| checker.one_of!(name, key, Proxy.names, "proxy") }.freeze
      end
    end

    # Use Experiment.load, .parse or .default; this takes normalized parts.
    def initialize(name:, seed:, batches:, rubies:, servers:, apps:, processes:, threads:, load:, env:, exclude:,
                   dimensions:, configurations:, source:, source_text:, pass_env: [].freeze, inside: DEFAULT_INSIDE,
                   profile: nil, profile_only: false, base_dir: Dir.pwd, tune: nil, proxy: [Proxy::NONE].freeze,
                   capacity: nil, gems: nil, gem_set_configurations: nil, measure: [Instructions::TIME].freeze,
                   instructions_settings: Instructions::Settings::DEFAULT)
      raise ArgumentError, "profile_only needs a profile" if profile_only && profile.nil?

      @name = name
      @profile = profile
      @profile_only = profile_only
      @tune = tune
      @capacity = capacity
      @gems = gems
      @gem_set_configurations = gem_set_configurations
      @seed = seed
      @batches = batches
      @rubies = rubies
      @servers = servers
      @apps = apps
      @processes = processes
      @threads = threads
      @load = load
      @env = env
      @pass_env = pass_env
      @inside = inside
      @proxy = proxy
      @measure = measure
      @instructions_settings = instructions_settings
      @exclude = exclude
      @dimensions = dimensions
      @configurations = configurations
      @source = source
      @base_dir = base_dir.dup.freeze
      @source_text = source_text.dup.freeze
      @fingerprint = Digest::SHA256.hexdigest(Canonical.json(canonical)).freeze
      freeze
    end

    # A copy with another +seed+ or number of +batches+ (the command line's
    # --seed), or another +profile+ (a Profile::Settings or nil) and
    # +profile_only+ (only the profiled trials run: `rackbench profile`),
    # with its own fingerprint.
    def with(seed: @seed, batches: @batches, profile: @profile, profile_only: @profile_only)
      checker = Checker.new(source)
      self.class.new(**parts, seed: checker.integer!(seed, "seed", min: 0),
                              batches: checker.integer!(batches, "batches", min: 1), profile: profile,
                              profile_only: profile_only)
    end

    # Whether its trials run under valgrind and count instructions (alone,
    # or beside time trials).
    def instructions?
      measure.include?(Instructions::INSTRUCTIONS)
    end

    # The kind of trial an experiment runs: Trial::Http, or Trial::Ws for
    # a WebSocket workload (load.workload connect, echo or broadcast).
    def trial_kind
      websocket? ? "ws" : "http"
    end

    # Whether its load is a WebSocket workload (WebSocketLoad).
    def websocket?
      load["workload"].any? { |workload| WebSocketLoad::WEBSOCKET.include?(workload) }
    end

    # How a trial's time is estimated, for the plan's listing.
    def estimate_note
      "warmup + duration + ~#{Config::OVERHEAD_S.round}s per trial"
    end

    # How many configurations of the full matrix the file's +exclude+ left out.
    def excluded_count
      dimensions.values.map(&:size).reduce(1, :*) - configurations.size
    end

    # The configurations to plan, whatever the resolved ruby variants (an
    # experiment names its rubies by label already).
    def configurations_for(_variants)
      configurations
    end

    # The ruby entries as Rubies.resolve takes them.
    def ruby_specs
      rubies.map { |r| { name: r.label, ruby: r.ruby, options: r.options, env: r.env, malloc: r.malloc, build: r.build }.compact }
    end

    # App keys added after the first release: in the fingerprint only when given.
    LATER_APP_KEYS = %w[setup reset expect_session_body bundle_without services websocket].freeze

    # malloc and build (added later) only when given: older experiments keep
    # their fingerprint. A build is its recipe's key, which digests the
    # source and the patches: change a patch and it is another experiment,
    # whose trials are never mixed with the old build's on resume.
    def canonical_ruby(ruby)
      hash = Canonical.sorted(ruby.to_h.except(:build)).reject { |k, v| k == "malloc" && v.nil? }
      ruby.build ? hash.merge("build" => ruby.build.key) : hash
    end

    def canonical_app(app)
      Canonical.sorted(app).reject { |k, v| k == "env" ? v.empty? : LATER_APP_KEYS.include?(k) && v.nil? }
    end

    # The normalized experiment as plain data, lists that the matrix treats
    # as sets sorted, so that reordering a list in the file changes neither
    # the fingerprint nor the order of the plan. Settings added after the
    # first release appear only when they differ from their default, so an
    # experiment stored by an older rackbench keeps its fingerprint.
    def canonical
      later_load = Settings::LATER_KEYS
      # App keys added later, left out while they have their default.
      data = {
        "format" => 1, "name" => name, "seed" => seed, "batches" => batches,
        "rubies" => sort(rubies.map { |r| canonical_ruby(r) }),
        "servers" => sort(servers.map { |s| Canonical.sorted(s) }),
        "apps" => sort(apps.map { |a| canonical_app(a) }),
        "processes" => processes.sort, "threads" => threads.sort,
        "load" => load.reject { |k, v| later_load[k] == v }.transform_values { |values| sort(values) },
        "env" => env.transform_values { |values| sort(values) },
        "exclude" => sort(exclude.map { |entry| entry.transform_values { |values| sort(values) } })
      }
      data["pass_env"] = pass_env.sort unless pass_env.empty?
      # Off changes what is stored (no inside figures) and what runs in the
      # server (no agent): a different experiment. Counting, the default,
      # keeps the fingerprint of an experiment stored before the key.
      data["inside"] = inside unless inside == DEFAULT_INSIDE
      # No proxy (the default) keeps the fingerprint of a file without the key.
      data["proxy"] = proxy.sort unless proxy == [Proxy::NONE]
      # Time alone (the default) keeps the fingerprint of a file without the key.
      data["measure"] = measure unless measure == [Instructions::TIME]
      data["instructions"] = instructions_settings.to_h unless instructions_settings.default?
      data["profile"] = profile.to_h if profile
      data["profile_only"] = true if profile_only
      # Only in files that have them: every other file keeps its fingerprint.
      data["tune"] = tune.to_h if tune
      data["capacity"] = capacity.to_h if capacity
      # Without gems: (or with its defaults) the fingerprint of a file
      # written before the key.
      data["gems"] = gems.canonical if gems&.canonical
      data
    end

    # The configurations whose rubies share the apps' gem sets
    # (Trial::Http::GemSets): this experiment's own, or those of the
    # experiment a step was derived from (#derive), so that a capacity or
    # tune step narrowed to one ruby runs the gems the whole experiment
    # resolved on its oldest ruby, not a set of its own.
    def gem_set_configurations
      @gem_set_configurations || configurations
    end

    # A copy whose gem sets are +other+'s (an Experiment it was derived
    # from); the fingerprint stays this experiment's.
    def sharing_gem_sets_with(other)
      self.class.new(**parts, gem_set_configurations: other.gem_set_configurations)
    end

    # Whether each ruby resolves the apps' gems on its own (`gems:
    # per_ruby`) rather than all installing one set per app and server.
    def gems_per_ruby?
      gems&.per_ruby? || false
    end

    # Whether every environment compiles native gems from source (`gems: {
    # force_ruby_platform: true }`, Bundler's setting of that name).
    def gems_force_ruby_platform?
      gems&.force_ruby_platform? || false
    end

    private

    # App keys added after the first release, left out of the canonical
    # form while they have their default (see #canonical).
    def parts
      { name: name, seed: seed, batches: batches, rubies: rubies, servers: servers, apps: apps, processes: processes,
        threads: threads, load: load, env: env, pass_env: pass_env, exclude: exclude, dimensions: dimensions,
        configurations: configurations, source: source, source_text: source_text, inside: inside, profile: profile,
        profile_only: profile_only, base_dir: base_dir, tune: tune, proxy: proxy, capacity: capacity, gems: gems,
        gem_set_configurations: @gem_set_configurations, measure: measure,
        instructions_settings: instructions_settings }
    end

    def sort(values)
      values.sort_by { |value| Canonical.sort_key(value) }
    end
  end
end
