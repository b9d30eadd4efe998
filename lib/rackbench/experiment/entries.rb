# frozen_string_literal: true

require "shellwords"
require_relative "../deep_freeze"

module Rackbench
  class Experiment
    # One entry of +rubies+: which install to run (+ruby+: a name listed by
    # `rackbench rubies` or an absolute path), under which +label+ results
    # show it, with extra command-line +options+ (Array of String) and +env+
    # (Hash of String => String). Two entries may use the same install with
    # different options, e.g. "ruby" and "ruby-yjit". +build+ is a
    # Rubies::Build::Recipe for a ruby built from source (its install is
    # then named after +label+, and other entries may name it in +ruby+),
    # else nil.
    RubySpec = Struct.new(:label, :ruby, :options, :env, :malloc, :build, keyword_init: true)

    # One entry of +servers+: the adapter +name+ (puma, webrick, ...), the
    # +label+ results show, and adapter-specific +options+ (Hash with String
    # keys, each checked against the adapter's option schema).
    ServerSpec = Struct.new(:label, :name, :options, keyword_init: true)

    # One entry of +apps+. +health+ is the path polled until the server is
    # ready, +load_path+ the path the load engine requests, +expect_status+,
    # +expect_content_type+ (a prefix) and +expect_body+ (a substring) what
    # a correct answer to +load_path+ looks like.
    #
    # +env+ holds the app's own variables for its server (a Hash, empty
    # unless given), e.g. RAILS_ENV or SECRET_KEY_BASE for the user's app.
    #
    # For the user's own app (+builtin+ false), +path+ is the absolute
    # directory holding config.ru and every field is resolved (health and
    # load_path "/", expect_status 200, the others nil unless given).
    #
    # For a built-in app (+builtin+ true), +path+ is nil and a field is nil
    # unless the experiment file overrides it: the app's own manifest
    # (apps/NAME/app.yml, Rackbench::Apps.builtin) supplies the rest, e.g.
    #   Apps.builtin(spec.name).to_h.merge(spec.to_h.compact)
    #
    # +setup+ and +reset+ (the user's own app only; nil unless given) are
    # its Hooks: commands run once per Bundler environment before its first
    # trial, and before each trial (doc/experiment.md). +expect_session_body+
    # (a substring, or nil) is what +load_path+ shows once a request list's
    # first entries have logged in (ServerProcess::SessionCheck).
    # +bundle_without+ is the Gemfile groups the app's Bundler environment
    # leaves out (a frozen Array of names, [] for every group), or nil when
    # the file does not say (see BundleEnv::Groups for what applies then).
    # +services+ is what rackbench starts for the app (a frozen Array of
    # Services::Spec, replacing a built-in app's own), or nil when the
    # file does not say. +websocket+ is where it serves WebSockets (an
    # AppWebSocket, replacing a built-in app's own), or nil when not given.
    AppSpec = Struct.new(:name, :builtin, :path, :health, :load_path, :expect_status, :expect_content_type,
                         :expect_body, :env, :setup, :reset, :expect_session_body, :bundle_without, :services,
                         :websocket, keyword_init: true)

    # A command of the user's app (+setup+ or +reset+): the +command+ line
    # (String) and the deadline it must finish within, +timeout_s+.
    Hook = Struct.new(:command, :timeout_s, keyword_init: true)

    # Parses and checks the +rubies+, +servers+ and +apps+ lists: who is
    # benchmarked. Each returns an Array of frozen specs with unique labels.
    class Entries
      RUBY_KEYS = %w[name ruby options env malloc build].freeze
      BUILD_KEYS = %w[source ref patches configure env].freeze
      SERVER_KEYS = %w[name label options].freeze
      APP_KEYS = %w[name path health load_path expect_status expect_content_type expect_body env setup reset
                    expect_session_body bundle_without services websocket].freeze
      HOOK_KEYS = %w[command timeout].freeze
      # How long a hook may run when the file does not say: a setup may
      # create and migrate a database, a reset only restores one.
      HOOK_TIMEOUT_S = { "setup" => 600.0, "reset" => 120.0 }.freeze
      # A Gemfile group name, as `group :development` writes it.
      GROUP_NAME = /\A[A-Za-z_][A-Za-z0-9_]*\z/.freeze
      EXPECTATIONS = %w[health load_path expect_status expect_content_type expect_body expect_session_body].freeze
      # What the user's own app gets when the file does not say.
      APP_DEFAULTS = { "health" => "/", "load_path" => "/", "expect_status" => 200 }.freeze
      LABEL_TEXT = "label ([A-Za-z0-9._+-])"

      # +checker+ :: Checker for errors
      # +base_dir+ :: directory relative app paths are resolved against
      # +known_servers+ :: adapter names accepted in +servers+
      # +known_apps+ :: built-in app names, or nil to accept any name
      # +option_schemas+ :: callable: adapter name => the options it accepts
      #                     (a schema answering #keys, #empty? and
      #                     #problem(key, value)), or nil when it cannot say
      #                     (the options are then checked by the adapter
      #                     when a trial's command is built)
      def initialize(checker, base_dir:, known_servers:, known_apps:, option_schemas: ->(_name) {})
        @checker = checker
        @base_dir = base_dir
        @known_servers = known_servers
        @known_apps = known_apps
        @option_schemas = option_schemas
      end

      def rubies(value)
        unique(entries(value, "rubies") { |item, key| ruby(item, key) }, "rubies", :label, "name")
      end

      def servers(value)
        unique(entries(value, "servers") { |item, key| server(item, key) }, "servers", :label, "label")
      end

      def apps(value)
        unique(entries(value, "apps") { |item, key| app(item, key) }, "apps", :name, "name")
      end

      private

      def entries(value, key)
        @checker.items!(value, key).map { |item, item_key| yield(item, item_key).freeze }
      end

      def unique(specs, key, attribute, field)
        seen = {}
        specs.each_with_index do |spec, i|
          label = spec[attribute]
          if seen.key?(label)
            @checker.fail!("#{key}[#{i}]", "duplicate #{field} #{label.inspect} (also #{key}[#{seen[label]}]); " \
                                           "give each entry its own #{field}")
          end
          seen[label] = i
        end
        specs.freeze
      end

      def ruby(item, key)
        unless item.is_a?(Hash)
          install = install(item, key)
          return RubySpec.new(label: install, ruby: install, options: [].freeze, env: {}.freeze)
        end

        @checker.keys!(item, RUBY_KEYS, key, required: %w[name])
        label = @checker.pattern!(item["name"], "#{key}.name", Checker::LABEL, LABEL_TEXT)
        if item.key?("build") && item.key?("ruby")
          @checker.fail!("#{key}.ruby", "give either ruby (an installed ruby) or build (one built from source), not both")
        end
        RubySpec.new(label: label, ruby: item.key?("build") ? label : install(item.fetch("ruby", label), "#{key}.ruby"),
                     options: ruby_options(item.fetch("options", []), "#{key}.options"),
                     env: env(item.fetch("env", {}), "#{key}.env"),
                     malloc: item.key?("malloc") ? malloc(item["malloc"], "#{key}.malloc") : nil,
                     build: item.key?("build") ? build(item["build"], label, "#{key}.build") : nil)
      end

      # A ruby built from source (doc/rubies.md, "Rubies built from
      # source"): paths relative to the experiment file, ~ expanded; the
      # source and the patches must exist now (a Recipe checks them).
      def build(value, label, key)
        @checker.keys!(value, BUILD_KEYS, key, required: %w[source])
        patches = value.key?("patches") ? @checker.items!(value["patches"], "#{key}.patches").map { |p, k| path(p, k) } : []
        configure = value.key?("configure") ? @checker.items!(value["configure"], "#{key}.configure").map { |a, k| @checker.string!(a, k) } : []
        Rubies::Build::Recipe.new(
          name: label, source: path(value["source"], "#{key}.source"),
          ref: value.key?("ref") ? @checker.string!(value["ref"].to_s, "#{key}.ref") : nil,
          patches: patches, configure: configure, env: env(value.fetch("env", {}), "#{key}.env")
        )
      rescue ConfigError => e
        raise if e.message.start_with?(@checker.source.to_s)

        @checker.fail!(key, e.message.sub(/\Aruby '#{Regexp.escape(label)}' build: /, ""))
      end

      def path(value, key)
        File.expand_path(@checker.string!(value, key), @base_dir)
      end

      # The malloc a variant runs (Rubies::Variant::MALLOCS); whether the
      # library is installed is checked when the run starts.
      def malloc(value, key)
        @checker.one_of!(value, key, Rubies::Variant::MALLOCS, "malloc")
      end

      # A ruby is a name (ruby, jruby, 3.1.2) or an absolute path; a relative
      # path would depend on the directory rackbench happens to run in.
      def install(value, key)
        install = @checker.string!(value, key)
        @checker.fail!(key, "#{install.inspect}: whitespace is not allowed") if install.match?(/\s/)
        if install.include?("/") && !install.start_with?("/")
          @checker.fail!(key, "#{install.inspect}: a ruby path must be absolute (or a name listed by `rackbench rubies`)")
        end
        install
      end

      # Options go on the ruby command line before the server's script, so
      # each must be a switch: a bare word would be run as the script.
      def ruby_options(value, key)
        items = value.is_a?(Array) ? value : [value]
        items.each_with_index.map do |option, i|
          option = @checker.string!(option, "#{key}[#{i}]")
          @checker.fail!("#{key}[#{i}]", "#{option.inspect} must start with - (e.g. --yjit)") unless option.start_with?("-")
          option
        end.freeze
      end

      def env(value, key)
        @checker.mapping!(value, key).to_h do |name, v|
          @checker.env_name!(name, "#{key}.#{name}")
          [name, @checker.env_value!(v, "#{key}.#{name}")]
        end.freeze
      end

      def server(item, key)
        unless item.is_a?(Hash)
          name = server_name(item, key)
          return ServerSpec.new(label: name, name: name, options: {}.freeze)
        end

        @checker.keys!(item, SERVER_KEYS, key, required: %w[name])
        name = server_name(item["name"], "#{key}.name")
        label = item.key?("label") ? @checker.pattern!(item["label"], "#{key}.label", Checker::LABEL, LABEL_TEXT) : name
        options = server_options(name, item.fetch("options", {}), "#{key}.options")
        ServerSpec.new(label: label, name: name, options: DeepFreeze.call(options))
      end

      # The options of one server entry, each key known to the adapter and
      # each value of the type it declares, e.g.
      #   servers[0].options.preload_ap: unknown option for unicorn (did you mean preload_app?); supported: ...
      def server_options(name, value, key)
        options = @checker.mapping!(value, key)
        schema = @option_schemas.call(name)
        return options unless schema

        options.each do |option, option_value|
          option_key = "#{key}.#{option}"
          forking_only!(name, option, schema, option_key)
          @checker.fail!(option_key, "#{name} takes no options") if schema.empty?
          unless option.is_a?(String) && schema.keys.include?(option)
            hint = @checker.suggestion(option, schema.keys)
            @checker.fail!(option_key, "unknown option for #{name}#{" (#{hint})" if hint}; " \
                                       "supported: #{schema.keys.join(", ")}")
          end
          problem = schema.problem(option, option_value)
          @checker.fail!(option_key, problem) if problem
        end
        options
      end

      # The GC compaction before fork is an option of the servers that fork
      # workers through a hook rackbench configures: say so, and which.
      def forking_only!(name, option, schema, key)
        return unless option == ServerOptions::GC_COMPACT_BEFORE_FORK && !schema.key?(option)

        forking = @known_servers.select { |server| @option_schemas.call(server)&.key?(option) }
        @checker.fail!(key, "#{name} does not fork workers through a hook rackbench configures; " \
                            "#{option} is an option of #{forking.join(", ")}")
      end

      def server_name(value, key)
        @checker.one_of!(value, key, @known_servers, "server")
      end

      def app(item, key)
        return builtin_app(builtin_name(item, key), {}, key) unless item.is_a?(Hash)

        @checker.keys!(item, APP_KEYS, key, required: %w[name])
        name = @checker.pattern!(item["name"], "#{key}.name", Checker::LABEL, "app #{LABEL_TEXT}")
        return user_app(name, item, key) if item.key?("path")

        if @known_apps && !@known_apps.include?(name)
          hint = @checker.suggestion(name, @known_apps)
          @checker.fail!("#{key}.path", "required: #{name.inspect} is not a built-in app#{" (#{hint})" if hint}; " \
                                        "built-in: #{@known_apps.join(", ")}")
        end
        builtin_app(name, item, key)
      end

      def builtin_name(value, key)
        name = @checker.pattern!(value, key, Checker::LABEL, "app #{LABEL_TEXT}")
        return name unless @known_apps

        @checker.one_of!(name, key, @known_apps, "built-in app", note: "for your own app write a mapping with name: and path:")
      end

      # A built-in app by name; a mapping without +path+ may override its
      # paths and expectations.
      def builtin_app(name, item, key)
        %w[setup reset].each do |hook|
          next if item[hook].nil?

          @checker.fail!("#{key}.#{hook}", "runs your own app's command: give the app a path (built-in apps seed " \
                                           "themselves)")
        end
        AppSpec.new(name: name, builtin: true, path: nil, env: app_env(item, key),
                    bundle_without: bundle_without(item, key), services: services(item, key),
                    websocket: websocket(item, key), **expectations(item, key, {}))
      end

      def user_app(name, item, key)
        path = @checker.string!(item["path"], "#{key}.path")
        dir = -File.expand_path(path, @base_dir)
        @checker.fail!("#{key}.path", "#{path.inspect} is not a directory (#{dir})") unless File.directory?(dir)
        unless File.file?(File.join(dir, "config.ru"))
          @checker.fail!("#{key}.path", "#{path.inspect} has no config.ru (#{dir})")
        end
        AppSpec.new(name: name, builtin: false, path: dir, env: app_env(item, key),
                    setup: hook(item["setup"], "setup", "#{key}.setup"),
                    reset: hook(item["reset"], "reset", "#{key}.reset"),
                    bundle_without: bundle_without(item, key), services: services(item, key),
                    websocket: websocket(item, key), **expectations(item, key, APP_DEFAULTS))
      end

      # The services rackbench starts for the app (Services::Spec.list),
      # or nil when not given.
      def services(item, key)
        return nil unless item.key?("services")

        Services::Spec.list(item["services"], "#{key}.services", fail: ->(path, message) { @checker.fail!(path, message) })
      end

      # Where the app serves WebSockets (AppWebSocket), or nil when not given.
      def websocket(item, key)
        return nil unless item.key?("websocket")

        AppWebSocket.parse(item["websocket"], "#{key}.websocket", fail: ->(path, message) { @checker.fail!(path, message) })
      end

      # A list of group names ([] allowed: every group), or nil when not
      # given.
      def bundle_without(item, key)
        value = item["bundle_without"]
        return nil if value.nil?

        field = "#{key}.bundle_without"
        unless value.is_a?(Array)
          @checker.fail!(field, "must be a list of Gemfile group names, e.g. [development, test]")
        end
        value.each_with_index.map do |group, i|
          @checker.pattern!(group, "#{field}[#{i}]", GROUP_NAME, "Gemfile group name")
        end.uniq.freeze
      end

      # A hook: a command line, or a mapping of command and timeout; nil
      # when not given.
      def hook(value, name, key)
        return nil if value.nil?

        value = { "command" => value } unless value.is_a?(Hash)
        @checker.keys!(value, HOOK_KEYS, key, required: %w[command])
        command = @checker.string!(value["command"], "#{key}.command").strip
        @checker.fail!("#{key}.command", "is empty") if command.empty?
        begin
          Shellwords.split(command)
        rescue ArgumentError => e
          @checker.fail!("#{key}.command", "#{command.inspect}: #{e.message}")
        end
        timeout_s = if value.key?("timeout")
                      @checker.duration!(value["timeout"], "#{key}.timeout", positive: true)
                    else
                      HOOK_TIMEOUT_S.fetch(name)
                    end
        Hook.new(command: command, timeout_s: timeout_s).freeze
      end

      def app_env(item, key)
        item.key?("env") ? env(item["env"], "#{key}.env") : {}.freeze
      end

      # The fields given in +item+, else from +defaults+, else nil. A key
      # written with nothing after it (null) counts as not given.
      def expectations(item, key, defaults)
        given = defaults.merge(item.compact)
        EXPECTATIONS.to_h do |field|
          value = given[field]
          [field.to_sym, value.nil? ? nil : expectation(field, value, "#{key}.#{field}")]
        end
      end

      def expectation(field, value, key)
        case field
        when "health", "load_path" then http_path(value, key)
        when "expect_status" then @checker.integer!(value, key, min: 100, max: 599)
        when "expect_session_body" then session_text(value, key)
        else @checker.string!(value, key)
        end
      end

      # One line of text: the session check matches it in a page's body.
      def session_text(value, key)
        text = @checker.string!(value, key)
        @checker.fail!(key, "must be one line of text, got #{text.inspect}") if text.empty? || text.match?(/[\x00-\x1f]/)
        text
      end

      def http_path(value, key)
        path = @checker.string!(value, key)
        @checker.fail!(key, "#{path.inspect} must start with / (e.g. /up)") unless path.start_with?("/")
        @checker.fail!(key, "#{path.inspect} must not contain whitespace") if path.match?(/\s/)
        path
      end
    end
  end
end
