# frozen_string_literal: true

require "yaml"
require_relative "deep_freeze"

module Rackbench
  # An app a trial can load: a directory with a config.ru and its own
  # Gemfile, plus what the runner checks before measuring it (TechEmpower
  # style: a broken app is never benchmarked).
  #
  # :name :: label in results
  # :dir :: absolute directory holding config.ru and Gemfile
  # :description :: what it measures, one line
  # :health :: path that must answer 200 before the server counts as ready (default: "/")
  # :load_path :: path the load engine requests (default: "/")
  # :expect_status :: status the load path must answer (default: 200)
  # :expect_content_type :: prefix of its Content-Type, or nil
  # :expect_body :: substring its body must contain, or nil
  # :expect_session_body :: substring the load path's body must contain once
  #   the request list's first entries have logged in (ServerProcess::SessionCheck), or nil
  # :builtin :: shipped with rackbench (apps/)
  # :engines :: RUBY_ENGINEs the app runs on ("ruby", "jruby"), or nil for any
  # :setup :: absolute path of a Ruby script run with the app's bundle before the server boots, or nil
  # :max_error_rate :: share of failed requests above which a trial fails, or nil for the runner's default
  # :requests :: absolute path of the request list the load engine replays (with a cookie jar), or nil
  # :base :: for a variant, the name of the app whose directory it uses; else nil
  # :env :: the app's own variables for its server (Hash of String => String; default: {})
  # :setup_hook, :reset_hook :: the user's app's commands (Experiment::Hook), run once per Bundler
  #                             environment and before each trial (Trial::Http::AppHooks), or nil
  # :bundle_without :: the experiment's Gemfile groups to leave out, or nil (BundleEnv::Groups decides)
  # :services :: the services rackbench starts for it (Array of Services::Spec; [] for none)
  # :websocket :: where and how it serves WebSockets (an AppWebSocket), or nil when it does not
  App = Struct.new(:name, :dir, :description, :health, :load_path, :expect_status, :expect_content_type,
                   :expect_body, :builtin, :engines, :setup, :max_error_rate, :requests, :base, :env,
                   :setup_hook, :reset_hook, :expect_session_body, :bundle_without, :services, :websocket,
                   keyword_init: true)

  # Reopened so that its methods live in the struct.
  class App
    # The App an experiment's app entry (an Experiment::AppSpec) names: a
    # built-in app with what the entry overrides, or the user's own app at
    # its path with the entry's expectations. The entry's env adds to (and
    # wins over) a built-in app's own; the entry's services replace its own.
    def self.resolve(spec)
      base = spec.builtin ? Apps.builtin(spec.name).to_h : { name: spec.name, builtin: false }
      overrides = spec.to_h.compact.slice(:name, :health, :load_path, :expect_status, :expect_content_type,
                                          :expect_body, :expect_session_body, :bundle_without)
      overrides[:dir] = spec.path if spec.path
      overrides[:env] = (base[:env] || {}).merge(spec.env || {})
      overrides[:setup_hook] = spec.setup
      overrides[:reset_hook] = spec.reset
      overrides[:services] = spec.services || base[:services] || []
      overrides[:websocket] = spec.websocket || base[:websocket] || (spec.builtin ? nil : user_websocket)
      new(health: "/", load_path: "/", expect_status: 200, **base.merge(overrides))
    end

    # A user's app whose entry says nothing of WebSockets: Action Cable
    # at /cable, as a Rails app mounts it.
    def self.user_websocket
      AppWebSocket.parse(AppWebSocket::USER_DEFAULT, "websocket", fail: ->(_k, m) { raise ConfigError, m })
    end

    # nil when the app runs on ruby_engine (a RUBY_ENGINE such as "jruby"),
    # else a one-line reason, so a plan can skip the combination up front.
    def unsupported_reason(ruby_engine)
      return nil if engines.nil? || engines.include?(ruby_engine.to_s)

      "app #{name} runs on #{engines.join(", ")} only (not #{ruby_engine})"
    end
  end

  # The apps shipped with the gem under apps/, each described by its
  # app.yml (doc/apps.md). An app.yml may also declare variants: other
  # built-in names for the same directory with some keys changed (mix is
  # rails-posts replaying a session request list).
  module Apps
    ROOT = File.expand_path("../../apps", __dir__)
    # Keys of an app.yml, and what each must be.
    MANIFEST_KEYS = %w[description health load_path expect_status expect_content_type expect_body engines setup
                       max_error_rate requests env expect_session_body services websocket variants].freeze
    # Keys a variant may change.
    VARIANT_KEYS = (MANIFEST_KEYS - %w[variants setup engines]).freeze
    ENGINES = %w[ruby jruby truffleruby].freeze
    DEFAULTS = { health: "/", load_path: "/", expect_status: 200, env: {}.freeze, services: [].freeze }.freeze

    module_function

    # Every built-in app name, variants included, sorted.
    def names
      (directories + directories.flat_map { |dir| manifest(dir).fetch("variants", {}).keys }).sort
    end

    # Every built-in App, in name order.
    def all
      names.map { |name| builtin(name) }
    end

    # The built-in app called name; ConfigError listing the others if none,
    # or naming the key of its app.yml that is wrong.
    def builtin(name)
      return build(name, name, {}) if directories.include?(name)

      base = directories.find { |dir| manifest(dir).fetch("variants", {}).key?(name) }
      raise ConfigError, "unknown app '#{name}'; built-in apps: #{names.join(", ")} (or give a path)" unless base

      build(name, base, manifest(base)["variants"][name])
    end

    # The built-in app names that are directories of their own.
    def directories
      return [] unless Dir.exist?(ROOT)

      Dir.children(ROOT).select { |name| File.file?(File.join(ROOT, name, "config.ru")) }.sort
    end

    # The parsed, checked app.yml of directory name (a Hash, frozen).
    #
    # Kept per file, by its modification time and size: an experiment's
    # parse, the plan and every report ask for the built-in apps' names and
    # manifests many times (the unit tier spent 7% of its CPU parsing the
    # same YAML again); an app.yml edited while a process runs is read again.
    def manifest(name)
      path = File.join(ROOT, name, "app.yml")
      stat = File.stat(path)
      key = [path, stat.mtime.to_r, stat.size]
      MANIFESTS_LOCK.synchronize { MANIFESTS[path] = nil unless MANIFESTS[path]&.first == key }
      kept = MANIFESTS[path]
      return kept.last if kept

      parsed = DeepFreeze.call(parse_manifest(name))
      MANIFESTS_LOCK.synchronize { MANIFESTS[path] = [key, parsed] }
      parsed
    rescue Errno::ENOENT
      raise ConfigError, "apps/#{name}/app.yml is missing"
    end

    MANIFESTS = {} # path => [[path, mtime, size], manifest]
    MANIFESTS_LOCK = Mutex.new

    def parse_manifest(name)
      file = "apps/#{name}/app.yml"
      data = YAML.safe_load(File.read(File.join(ROOT, name, "app.yml")))
      raise ConfigError, "#{file}: must be a mapping" unless data.is_a?(Hash)

      check_keys(data, MANIFEST_KEYS, file)
      variants = data.fetch("variants", {})
      raise ConfigError, "#{file}: variants must be a mapping of name => keys" unless variants.is_a?(Hash)

      variants.each do |variant, keys|
        raise ConfigError, "#{file}: variants.#{variant} must be a mapping" unless keys.is_a?(Hash)

        check_keys(keys, VARIANT_KEYS, "#{file}: variants.#{variant}")
      end
      data
    rescue Errno::ENOENT
      raise ConfigError, "#{file} is missing"
    rescue Psych::Exception => e
      raise ConfigError, "#{file}: #{e.message}"
    end

    def check_keys(hash, allowed, where)
      unknown = hash.keys - allowed
      raise ConfigError, "#{where}: unknown keys #{unknown.join(", ")}" unless unknown.empty?
    end

    def build(name, base, overrides)
      dir = File.join(ROOT, base)
      data = manifest(base).reject { |key, _| key == "variants" }.merge(overrides)
      where = "apps/#{base}/app.yml#{" (variant #{name})" unless name == base}"
      App.new(**DEFAULTS, name: name, dir: dir, builtin: true, base: name == base ? nil : base,
                          **normalize(data, dir, where))
    end

    def normalize(data, dir, where)
      fields = data.transform_keys(&:to_sym)
      fields[:engines] = engines(fields[:engines], where) if fields.key?(:engines)
      fields[:setup] = app_file(dir, fields[:setup], "setup", where) if fields[:setup]
      fields[:requests] = app_file(dir, fields[:requests], "requests", where) if fields[:requests]
      fields[:env] = app_env(fields[:env], where) if fields.key?(:env)
      if fields.key?(:services)
        fields[:services] = Services::Spec.list(fields[:services], "services",
                                                fail: ->(key, message) { raise ConfigError, "#{where}: #{key}: #{message}" })
      end
      if fields.key?(:websocket)
        fields[:websocket] = AppWebSocket.parse(fields[:websocket], "websocket",
                                                fail: ->(key, message) { raise ConfigError, "#{where}: #{key}: #{message}" })
      end
      if fields.key?(:expect_session_body)
        text = fields[:expect_session_body]
        unless text.is_a?(String) && !text.empty? && !text.match?(/[\x00-\x1f]/)
          raise ConfigError, "#{where}: expect_session_body must be one line of text, got #{text.inspect}"
        end
      end
      if fields.key?(:max_error_rate)
        rate = fields[:max_error_rate]
        unless rate.is_a?(Numeric) && rate >= 0 && rate <= 1
          raise ConfigError, "#{where}: max_error_rate must be a number from 0 to 1, got #{rate.inspect}"
        end
      end
      fields
    end

    def engines(value, where)
      list = Array(value)
      unless !list.empty? && list.all? { |engine| ENGINES.include?(engine) }
        raise ConfigError, "#{where}: engines must list some of #{ENGINES.join(", ")}, got #{value.inspect}"
      end

      list.freeze
    end

    def app_env(value, where)
      ok = value.is_a?(Hash) && value.all? { |k, v| k.is_a?(String) && k.match?(/\A[A-Za-z_]\w*\z/) && v.is_a?(String) }
      raise ConfigError, "#{where}: env must map variable names to strings, got #{value.inspect}" unless ok

      value.freeze
    end

    # A file the app ships, named relative to its directory.
    def app_file(dir, name, key, where)
      path = File.expand_path(name.to_s, dir)
      raise ConfigError, "#{where}: #{key} #{name.inspect} not found (#{path})" unless File.file?(path)

      path
    end

    private_class_method :parse_manifest, :check_keys, :build, :normalize, :engines, :app_env, :app_file
  end
end
