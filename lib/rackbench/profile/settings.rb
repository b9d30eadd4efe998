# frozen_string_literal: true

require_relative "../field_equality"

module Rackbench
  module Profile
    # The experiment's `profile:` key (doc/experiment.md), validated:
    #
    #   profile: stackprof
    #   profile: { tool: stackprof, mode: cpu, interval_us: 1000, trials: 1 }
    #
    #   profile: { tool: objspace }       allocations by class (agent/allocation_census.rb)
    #
    # tool :: "stackprof", "vernier" (CRuby 3.2.1+: see #unsupported_reason) or "objspace"
    #         (CRuby: every allocation of a span of the window counted by its class)
    # mode :: "cpu" (default), "wall" (vernier only: STACKPROF_WALL) or "object"; objspace counts objects only
    # interval :: microseconds between samples for cpu and wall (interval_us, default 1000), allocations
    #             per sample for object (interval_objects, default 1)
    # trials :: profiled trials per configuration, one in each of the first +trials+ batches (default 1)
    class Settings
      # Equal by value: by #to_h (defined below, the canonical form).
      include FieldEquality
      TOOLS = %w[stackprof vernier objspace].freeze
      # Tools that count allocations only: their one mode.
      OBJECT_ONLY = %w[objspace].freeze
      # StackProf's wall mode forwards every timer signal to the thread
      # that started it (stackprof.c, "forward this signal to the original
      # thread"): in a server under rackbench that is the agent's window
      # watcher, blocked reading its pipe, so every sample is the watcher's
      # IO#read and none a request's (measured: doc/performance.md).
      STACKPROF_WALL = "StackProf's wall mode samples only the thread that started it, which in a server is " \
                       "rackbench's window watcher, never a request: use tool vernier (CRuby 3.2.1+), whose wall " \
                       "mode samples every thread, or mode cpu"
      MODES = %w[cpu wall object].freeze
      KEYS = %w[tool mode interval_us interval_objects trials].freeze
      DEFAULT_INTERVAL_US = 1000
      # Below this, StackProf's signal handler itself is most of what it samples.
      MIN_INTERVAL_US = 100
      # Vernier's first release that runs on Ruby's public API for it.
      VERNIER_MIN_RUBY = "3.2.1"
      # What the launcher adds to every Bundler environment of a profiled
      # experiment (BundleEnv::Gemfile keeps an app's own stackprof line).
      GEM_LINES = { "stackprof" => ['gem "stackprof", ">= 0.2.16", require: false'],
                    "vernier" => ['gem "vernier", ">= 1.0", require: false'] }.freeze

      attr_reader :tool, :mode, :interval, :trials

      # The Settings of the key's value, or nil when it is absent (nil).
      # checker :: an Experiment::Checker, for errors naming the file and key
      # batches :: the experiment's batches (profiled trials go in its first ones)
      def self.parse(value, checker, batches:, key: "profile")
        return nil if value.nil?

        value = { "tool" => value } if value.is_a?(String)
        checker.keys!(value, KEYS, key, required: %w[tool])
        tool = checker.one_of!(value["tool"], "#{key}.tool", TOOLS, "profiler")
        mode = checker.one_of!(value.fetch("mode", OBJECT_ONLY.include?(tool) ? "object" : "cpu"), "#{key}.mode", MODES, "mode")
        checker.fail!("#{key}.mode", STACKPROF_WALL) if tool == "stackprof" && mode == "wall"
        if OBJECT_ONLY.include?(tool) && mode != "object"
          checker.fail!("#{key}.mode", "#{tool} counts allocations by class: its mode is object, not #{mode}")
        end
        if OBJECT_ONLY.include?(tool) && value.fetch("interval_objects", 1) != 1
          checker.fail!("#{key}.interval_objects", "#{tool} counts every allocation of its span: no interval")
        end
        trials = checker.integer!(value.fetch("trials", 1), "#{key}.trials", min: 1, max: batches)
        new(tool: tool, mode: mode, interval: interval(value, mode, checker, key), trials: trials)
      end

      def self.interval(value, mode, checker, key)
        if mode == "object"
          checker.fail!("#{key}.interval_us", "object mode samples allocations: use interval_objects") if value.key?("interval_us")
          checker.integer!(value.fetch("interval_objects", 1), "#{key}.interval_objects", min: 1)
        else
          checker.fail!("#{key}.interval_objects", "#{mode} mode samples time: use interval_us") if value.key?("interval_objects")
          checker.integer!(value.fetch("interval_us", DEFAULT_INTERVAL_US), "#{key}.interval_us", min: MIN_INTERVAL_US)
        end
      end

      def initialize(tool:, mode: nil, interval: nil, trials: 1)
        @tool = tool
        @mode = mode || (OBJECT_ONLY.include?(tool) ? "object" : "cpu")
        raise ConfigError, "profile.mode: #{STACKPROF_WALL}" if tool == "stackprof" && @mode == "wall"
        @interval = interval || (@mode == "object" ? 1 : DEFAULT_INTERVAL_US)
        @trials = trials
        freeze
      end

      # A copy in another mode (`rackbench profile --mode`), with that
      # mode's default interval unless the mode is the same.
      def with_mode(mode)
        return self if mode == @mode
        if OBJECT_ONLY.include?(tool)
          raise ConfigError, "profile.tool #{tool} counts allocations by class: its mode is object, not #{mode}"
        end

        Settings.new(tool: tool, mode: mode, trials: trials)
      end

      # The canonical form, for the experiment's fingerprint, and the mark
      # a profiled trial's record carries (load_settings["profile"]).
      def to_h
        { "tool" => tool, "mode" => mode, "interval" => interval, "trials" => trials }
      end

      # RACKBENCH_PROFILE for agent/profile.rb: "stackprof:cpu:1000".
      def env_value
        "#{tool}:#{mode}:#{interval}"
      end

      # Gemfile lines every Bundler environment of the experiment gets, so
      # that the profiler loads in the server's bundle, the user's own app
      # included.
      def gem_lines
        GEM_LINES.fetch(tool, [])
      end

      # nil when the profiler runs under install (a Rubies::Install); else
      # why not, as one line naming the ruby and its version.
      def unsupported_reason(install)
        case tool
        when "vernier"
          return nil if install.engine == "ruby" && Gem::Version.new(install.version.to_s) >= Gem::Version.new(VERNIER_MIN_RUBY)

          "profile.tool vernier needs Ruby >= #{VERNIER_MIN_RUBY}; #{install.name} is #{install.engine} #{install.version}"
        when "stackprof", "objspace"
          return nil if install.engine == "ruby"

          "profile.tool #{tool} needs CRuby; #{install.name} is #{install.engine} #{install.version}"
        end
      end

    end
  end
end
