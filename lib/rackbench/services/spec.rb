# frozen_string_literal: true

module Rackbench
  module Services
    # One entry of an app's `services:` (the experiment's app entry, or an
    # app.yml), checked: which service (+name+, one of NAMES), the variable
    # that passes it to the app (+env+: nil for the service's own,
    # DATABASE_URL, REDIS_URL or MEMCACHE_SERVERS), a loopback +port+ to
    # listen on instead of the default (nil: a unix socket for PostgreSQL
    # and Redis, a free port for memcached), and the service's own
    # +settings+ (String => String; see each kind's SETTINGS).
    Spec = Struct.new(:name, :env, :port, :settings, keyword_init: true) do
      # The variable the app gets the service's address in.
      def env_name
        env || Services.fetch(name).default_env
      end

      # Every variable the app gets from the service: env_name and what
      # the kind adds for its clients (PostgreSQL on its socket: PGHOST).
      def env_names
        [env_name, *Services.fetch(name).client_env_names(tcp: !port.nil?)]
      end

      # What the fingerprint and the stored experiment keep: the name
      # alone when nothing else is set, so `services: [postgresql]` reads
      # back as written.
      def canonical
        extra = { "env" => env, "port" => port, "settings" => settings.empty? ? nil : settings }.compact
        extra.empty? ? name : { "name" => name, **extra }
      end
    end

    # Reopened so that its class methods live in the struct.
    class Spec
      KEYS = %w[name env port settings].freeze
      ENV_NAME = /\A[A-Za-z_][A-Za-z0-9_]*\z/

      # The checked list of an app's services (a frozen Array of frozen
      # Specs) from value, the YAML of `services:` (a name, or a list of
      # names and mappings). key names it in errors ("apps[1].services");
      # fail is called with the key path of a mistake and its message, and
      # must raise.
      def self.list(value, key, fail:)
        items = value.is_a?(Array) ? value : [value]
        fail.call(key, "must name at least one service (#{Services.names.join(", ")})") if value.nil? || items.empty?
        specs = items.each_with_index.map { |item, i| entry(item, "#{key}[#{i}]", fail) }
        unique!(specs, key, fail)
        specs.freeze
      end

      def self.entry(item, key, fail)
        return new(name: name(item, key, fail), env: nil, port: nil, settings: {}.freeze).freeze unless item.is_a?(Hash)

        unknown = item.keys - KEYS
        fail.call("#{key}.#{unknown.first}", "unknown key; allowed: #{KEYS.join(", ")}") unless unknown.empty?
        fail.call("#{key}.name", "required") unless item.key?("name")
        name = name(item["name"], "#{key}.name", fail)
        new(name: name, env: env(item["env"], "#{key}.env", fail), port: port(item["port"], "#{key}.port", fail),
            settings: settings(name, item.fetch("settings", {}), "#{key}.settings", fail)).freeze
      end

      def self.name(value, key, fail)
        return value if Services.names.include?(value)

        fail.call(key, "unknown service #{value.inspect}; known: #{Services.names.join(", ")}")
      end

      def self.env(value, key, fail)
        return nil if value.nil?
        unless value.is_a?(String) && ENV_NAME.match?(value) && !value.start_with?("RACKBENCH_")
          fail.call(key, "must be an environment variable name (not RACKBENCH_*), got #{value.inspect}")
        end

        -value
      end

      def self.port(value, key, fail)
        return nil if value.nil?
        return value if value.is_a?(Integer) && value.between?(1, 65_535)

        fail.call(key, "must be a TCP port 1-65535, got #{value.inspect}")
      end

      # The kind's own settings, each checked by the kind (Kind#setting_problem).
      def self.settings(name, value, key, fail)
        fail.call(key, "must be a mapping of setting => value") unless value.is_a?(Hash)

        kind = Services.fetch(name)
        value.to_h do |setting, setting_value|
          problem = kind.setting_problem(setting, setting_value)
          fail.call("#{key}.#{setting}", problem) if problem
          [-setting.to_s, -kind.setting_value(setting_value)]
        end.freeze
      end

      # One service of each kind per app, and one variable per service.
      def self.unique!(specs, key, fail)
        specs.group_by(&:name).each do |name, same|
          fail.call(key, "#{name} is listed twice; an app gets one of each service") if same.size > 1
        end
        specs.group_by(&:env_name).each do |env_name, same|
          next if same.size == 1

          fail.call(key, "#{same.map(&:name).join(" and ")} both set #{env_name}; give one another env")
        end
      end

      private_class_method :entry, :name, :env, :port, :settings, :unique!
    end
  end
end
