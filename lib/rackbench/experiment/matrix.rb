# frozen_string_literal: true

module Rackbench
  class Experiment
    # The matrix: the cartesian product of every dimension, minus the
    # +exclude+ entries.
    #
    # Dimensions, in this order: ruby, server, app, processes, threads
    # (always, even with one value, because every result is tagged with
    # them), proxy (when the file names a proxy other than none), then each
    # +load+ key, each +env+ variable and each gem of +gems+ that has more
    # than one value. A list of one value is the same as the value.
    class Matrix
      # More configurations than this is almost certainly a mistake (a
      # forgotten exclude, a list where a value was meant), and would take
      # days to run.
      MAX_CONFIGURATIONS = 10_000

      # Stands for "no exclude key in the file" (YAML cannot produce a
      # Symbol), as opposed to an explicit null, which is an error.
      NO_EXCLUDE = :none

      # Hash of dimension name => Array of values (labels for ruby and server).
      attr_reader :dimensions
      # Array of Hash of dimension name => Array of values, one per entry.
      attr_reader :exclude
      # Array of Config, in matrix order (rubies outermost, as written).
      attr_reader :configurations

      # +parts+ :: Hash with :rubies, :servers, :apps, :processes, :threads,
      #            :load and :env as Experiment holds them
      # +exclude+ :: the raw +exclude+ value from the file, or NO_EXCLUDE
      def initialize(checker, settings, parts, exclude)
        @checker = checker
        @settings = settings
        @parts = parts
        @dimensions = build_dimensions.freeze
        @exclude = parse_exclude(exclude).freeze
        @configurations = expand.freeze
      end

      private

      def build_dimensions
        dims = {
          "ruby" => @parts[:rubies].map(&:label),
          "server" => @parts[:servers].map(&:label),
          "app" => @parts[:apps].map(&:name),
          "processes" => @parts[:processes],
          "threads" => @parts[:threads]
        }
        # A proxy in front of the server tags every result; none alone (the
        # default) is no dimension, so older configurations keep their keys.
        dims["proxy"] = @parts[:proxy] unless @parts.fetch(:proxy, [Proxy::NONE]) == [Proxy::NONE]
        @parts[:load].each { |name, values| dims["load.#{name}"] = values if values.size > 1 }
        @parts[:env].each { |name, values| dims["env.#{name}"] = values if values.size > 1 }
        dims.merge!(@parts[:gems].dimensions) if @parts[:gems]
        dims.transform_values(&:freeze)
      end

      # Every name that could be a dimension, to tell "not a dimension here"
      # apart from a typo.
      def possible_dimensions
        gems = @parts[:gems] ? @parts[:gems].pins.keys.map { |n| "#{Gems::DIMENSION_PREFIX}#{n}" } : []
        @dimensions.keys | @parts[:load].keys.map { |n| "load.#{n}" } | @parts[:env].keys.map { |n| "env.#{n}" } | gems
      end

      def parse_exclude(value)
        return [] if value == NO_EXCLUDE

        @checker.items!(value, "exclude").map do |entry, key|
          @checker.mapping!(entry, key)
          @checker.fail!(key, "must name at least one dimension") if entry.empty?
          entry.to_h { |name, values| exclude_pair(name.to_s, values, "#{key}.#{name}") }.freeze
        end
      end

      def exclude_pair(name, values, key)
        unless @dimensions.key?(name)
          dims = @dimensions.keys.join(", ")
          if possible_dimensions.include?(name)
            @checker.fail!(key, "#{name} is not a dimension: it has one value in this experiment; dimensions: #{dims}")
          end
          hint = @checker.suggestion(name, possible_dimensions)
          @checker.fail!(key, "unknown dimension#{" (#{hint})" if hint}; dimensions: #{dims}")
        end
        normalized = @checker.list!(values, key) { |value, value_key| exclude_value(name, value, value_key) }
        [name, normalized.freeze]
      end

      # A value is normalized as in its own section ("10s" == 10) and must
      # occur in the dimension: a typo would otherwise exclude nothing.
      def exclude_value(name, value, key)
        normalized = case name
                     when "ruby", "server", "app", "proxy" then @checker.string!(value, key)
                     when "processes", "threads" then @checker.integer!(value, key, min: 1)
                     when /\Aload\.(.+)\z/ then @settings.load_value(Regexp.last_match(1), value, key)
                     when /\Agem\./ then Gems.requirement(value, key, @checker)
                     else @checker.env_value!(value, key)
                     end
        allowed = @dimensions.fetch(name)
        return normalized if allowed.include?(normalized)

        hint = normalized.is_a?(String) ? @checker.suggestion(normalized, allowed.grep(String)) : nil
        @checker.fail!(key, "#{value.inspect} is not in the matrix#{" (#{hint})" if hint}; " \
                            "values: #{allowed.map { |v| v.nil? ? "null" : v }.join(", ")}")
      end

      def expand
        size = @dimensions.values.map(&:size).reduce(1, :*)
        if size > MAX_CONFIGURATIONS
          @checker.fail!(nil, "the matrix has #{size} configurations (at most #{MAX_CONFIGURATIONS}); " \
                              "use fewer values or exclude combinations")
        end
        names = @dimensions.keys
        first, *rest = @dimensions.values
        combinations = first.product(*rest).map { |values| names.zip(values).to_h }
        kept = combinations.reject { |dims| excluded?(dims) }
        @checker.fail!("exclude", "removes every configuration") if kept.empty?
        kept.map { |dims| config(dims) }.each { |config| check_config(config) }
      end

      def excluded?(dims)
        @exclude.any? { |entry| entry.all? { |name, values| values.include?(dims[name]) } }
      end

      def config(dims)
        load = Settings::LOAD_KEYS.to_h do |name, option|
          [option, dims.fetch("load.#{name}") { @parts[:load][name].first }]
        end
        env = @parts[:env].to_h { |name, values| [name, dims.fetch("env.#{name}") { values.first }] }
        Config.build(
          ruby: @parts[:rubies].find { |r| r.label == dims["ruby"] },
          server: @parts[:servers].find { |s| s.label == dims["server"] },
          app: @parts[:apps].find { |a| a.name == dims["app"] },
          processes: dims["processes"], threads: dims["threads"], proxy: dims.fetch("proxy", Proxy::NONE),
          load: load.freeze, env: env.freeze, dims: dims,
          gems: (@parts[:gems] ? @parts[:gems].pins_for(dims) : {}).freeze
        )
      end

      # HTTP/1.1 carries one request per connection at a time; HTTP/2 keeps
      # its connections open for their streams and has no cookie jar yet.
      # h2c is HTTP/2 over cleartext, h2 HTTP/2 over TLS (load.tls).
      def check_protocol(load)
        check_tls(load)
        protocol = load[:protocol]
        if protocol == "http1"
          return if load[:streams] == 1

          @checker.fail!("load.streams", "#{load[:streams]} streams need load.protocol h2c or h2 " \
                                         "(HTTP/1.1 carries one request at a time)")
        end
        @checker.fail!("load.keepalive", "false cannot be combined with load.protocol #{protocol}") unless load[:keepalive]
        return unless load[:cookies] || !load[:cookie_presets].to_a.empty?

        @checker.fail!("load.cookies", "the cookie jar is not supported with load.protocol #{protocol} yet")
      end

      def check_tls(load)
        tls = load[:tls]
        if load[:protocol] == "h2" && !tls
          @checker.fail!("load.protocol", "h2 is HTTP/2 over TLS: it needs load.tls true (h2c is the cleartext one)")
        end
        if load[:protocol] == "h2c" && tls
          @checker.fail!("load.protocol", "h2c is HTTP/2 over cleartext: with load.tls true use h2")
        end
        return if tls || load[:tls_resume]

        @checker.fail!("load.tls_resume", "false needs load.tls true (it is about TLS sessions)")
      end

      # A load host measures over the network: the timeout is the
      # experiment's (the calibration runs beside the server), and the
      # proxies listen on the loopback only.
      def check_load_host(config)
        return unless config.load[:host]

        if config.load[:timeout_s].nil?
          @checker.fail!("load.host", "needs load.timeout (a load host's timeout is not calibrated): e.g. timeout: 2s")
        end
        @checker.fail!("load.host", "cannot be combined with proxy: #{config.proxy}") if config.proxied?
      end

      # A window of a fixed count and a think time are closed loop over
      # HTTP/1.1 (LoadSettings#validate_count!, #validate_think!).
      def check_count(load)
        if load[:think_s].to_f.positive?
          @checker.fail!("load.think", "is a closed-loop client's pause: it cannot be combined with load.rate") if load[:rate]
          @checker.fail!("load.think", "is not supported with load.protocol h2c or h2 yet") if load[:protocol] != "http1"
        end
        if load[:count].nil?
          @checker.fail!("load.warmup_count", "needs load.count (a window of N requests)") if load[:warmup_count]
          return
        end

        @checker.fail!("load.count", "is a closed-loop window: it cannot be combined with load.rate") if load[:rate]
        @checker.fail!("load.count", "is not supported with load.protocol h2c or h2 yet") if load[:protocol] != "http1"
      end

      # Checks across keys that only make sense per configuration.
      def check_config(config)
        if WebSocketLoad.websocket?(config.load)
          WebSocketLoad.new(@checker).check_config!(config.load)
          return config
        end
        if config.load[:cookies] == false && !config.load[:cookie_presets].to_a.empty?
          @checker.fail!("load.preset_cookies", "needs the cookie jar, but load.cookies is false")
        end
        check_protocol(config.load)
        check_count(config.load)
        check_load_host(config)
        return config if config.load[:threads] <= config.load[:connections]

        @checker.fail!("load.threads", "#{config.load[:threads]} engine threads but only " \
                                       "#{config.load[:connections]} load.connections (each thread needs one)")
      end
    end
  end
end
