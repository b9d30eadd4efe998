# frozen_string_literal: true

module Rackbench
  class Experiment
    # Parses and checks the sweep values: +processes+, +threads+, +load+ and
    # +env+. Every value may be written once or as a list; each comes back
    # as a frozen, duplicate-free Array (a list of more than one value is a
    # matrix dimension).
    class Settings
      # The +load+ keys: the LoadSettings option each becomes, and its
      # default. +connections+ has no fixed default (see #default_connections).
      LOAD_KEYS = {
        "connections" => :connections,
        "threads" => :threads,
        "duration" => :duration_s,
        "warmup" => :warmup_s,
        "rate" => :rate,
        "keepalive" => :keepalive,
        "requests" => :requests_file,
        "timeout" => :timeout_s,
        "cookies" => :cookies,
        "headers" => :headers,
        "preset_cookies" => :cookie_presets,
        "protocol" => :protocol,
        "streams" => :streams,
        "count" => :count,
        "think" => :think_s,
        "warmup_count" => :warmup_count,
        # Where the engine runs: null (beside the server) or a load host,
        # ssh://USER@HOST[:PORT][/PATH/TO/rackbench-engine] (RemoteHost).
        "host" => :host,
        "tls" => :tls,
        "tls_resume" => :tls_resume,
        # WebSockets (doc/websockets.md, WebSocketLoad): the workload, its
        # clients, their connects' ramp, the broadcasts' interval and
        # sender, the size of each message.
        "workload" => :workload,
        "clients" => :clients,
        "ramp" => :ramp_s,
        "interval" => :interval_s,
        "broadcaster" => :broadcaster,
        "message_bytes" => :message_bytes
      }.freeze

      LOAD_DEFAULTS = {
        "threads" => 1, "duration" => 10.0, "warmup" => 5.0, "rate" => nil,
        "keepalive" => true, "requests" => nil, "timeout" => nil, "cookies" => nil,
        "headers" => [].freeze, "preset_cookies" => [].freeze, "protocol" => "http1", "streams" => 1, "host" => nil,
        "tls" => false, "tls_resume" => true,
        "count" => nil, "think" => nil, "warmup_count" => nil,
        "workload" => "http", "clients" => nil, "ramp" => 0.0, "interval" => nil, "broadcaster" => nil,
        "message_bytes" => nil
      }.freeze

      # load.host: the engine beside the server, spelt out.
      LOCAL_HOST = "local"

      # load.timeout: auto (or null, or left out) has the timeout follow
      # from a calibration of each configuration (Trial::Http::Calibration).
      AUTO = "auto"

      # Keys added after the first release, left out of the fingerprint
      # while they have their default, so that an experiment stored by an
      # older rackbench is still recognised by --resume.
      LATER_KEYS = {
        "cookies" => [nil], "headers" => [[]], "preset_cookies" => [[]], "protocol" => ["http1"], "streams" => [1],
        "host" => [nil],
        "tls" => [false], "tls_resume" => [true],
        "count" => [nil], "think" => [nil], "warmup_count" => [nil],
        "workload" => ["http"], "clients" => [nil], "ramp" => [0.0], "interval" => [nil], "broadcaster" => [nil],
        "message_bytes" => [nil]
      }.freeze

      # Request headers load.headers may not set: the engine writes them
      # (Host, Content-Length), a jar or preset_cookies carries cookies.
      RESERVED_HEADERS = %w[host content-length transfer-encoding cookie].freeze
      HEADER_NAME = /\A[!#$%&'*+\-.^_`|~0-9A-Za-z]+\z/
      COOKIE_NAME = /\A[!#$%&'*+\-.^_`|~0-9A-Za-z]+\z/

      # The fewest connections the default gives.
      MIN_DEFAULT_CONNECTIONS = 16
      # An experiment that counts instructions: one connection unless the
      # file says otherwise (every request waits for a sleeping server
      # anyway: doc/methodology.md); with several server processes,
      # INSTRUCTIONS_CONNECTIONS_PER_PROCESS per process, so that the
      # warmup reaches every worker: Puma closes a connection after 999
      # requests (max_keep_alive), and the connection the engine opens
      # again may land on a worker the warmup never reached, whose first
      # requests in the window then count its JIT compiling (Ruby 3.4.5
      # with YJIT on Puma 2x2: 450,000 instructions per request against
      # 150,000).
      INSTRUCTIONS_CONNECTIONS = 1
      INSTRUCTIONS_CONNECTIONS_PER_PROCESS = 4
      # load.think left to auto (null): no pause for a time trial; this
      # long for an instructions trial (Trial::Http::LoadRun.settings).
      INSTRUCTIONS_THINK_S = 0.01
      # load.warmup_count left to auto (null): a time trial warms up for
      # load.warmup; an instructions trial for as many requests as its
      # window counts, at least this many (a JIT's server under valgrind
      # answers a tenth of the interpreter's requests in the same time
      # while it compiles).
      INSTRUCTIONS_MIN_WARMUP_COUNT = 1000

      def initialize(checker, base_dir:)
        @checker = checker
        @base_dir = base_dir
      end

      # +processes+ or +threads+ (the server's): Array of Integer >= 1.
      def counts(value, key)
        @checker.list!(value, key) { |item, item_key| @checker.integer!(item, item_key, min: 1) }.freeze
      end

      # The +load+ mapping: Hash of String key => Array of normalized values,
      # every key present (defaults filled in). Durations are Float seconds,
      # +requests+ an absolute path (or nil), +rate+ Float requests/s (or nil).
      # :instructions :: whether the experiment counts instructions: then
      #                  load.connections defaults to 1 (default_connections)
      def load(value, processes:, threads:, instructions: false)
        @checker.keys!(value, LOAD_KEYS.keys, "load")
        # A window is a duration or a count of requests, never both; so is a warmup.
        if value.key?("duration") && !value["count"].nil?
          @checker.fail!("load.count", "cannot be given with load.duration: both end the measured window")
        end
        if value.key?("warmup") && ![nil, AUTO].include?(value["warmup_count"])
          @checker.fail!("load.warmup_count", "cannot be given with load.warmup: both end the warmup")
        end
        websocket = WebSocketLoad.new(@checker).check_keys!(value)
        LOAD_KEYS.keys.to_h do |name|
          values = if value.key?(name)
                     load_values(name, value[name])
                   elsif name == "connections"
                     [instructions ? instructions_connections(processes) : default_connections(processes, threads)]
                   elsif websocket && WebSocketLoad::DEFAULTS.key?(name)
                     [WebSocketLoad::DEFAULTS.fetch(name)]
                   else
                     [LOAD_DEFAULTS.fetch(name)]
                   end
          [name, values.freeze]
        end.freeze
      end

      # Normalizes one value of load key +name+ (also used for exclude
      # entries, so that "10s" there matches 10 here).
      def load_value(name, value, key)
        case name
        when "connections" then @checker.integer!(value, key, min: 1)
        when "threads" then @checker.integer!(value, key, min: 1, max: 1024)
        when "duration" then @checker.duration!(value, key, positive: true)
        when "warmup" then @checker.duration!(value, key)
        when "timeout" then value.nil? || value == AUTO ? nil : @checker.duration!(value, key, min_s: 0.001)
        when "keepalive" then @checker.boolean!(value, key)
        when "rate" then rate(value, key)
        when "requests" then requests_file(value, key)
        when "cookies" then value.nil? ? nil : @checker.boolean!(value, key)
        when "headers" then headers(value, key)
        when "preset_cookies" then preset_cookies(value, key)
        when "protocol" then @checker.one_of!(value, key, LoadSettings::PROTOCOLS, "protocol")
        when "streams" then @checker.integer!(value, key, min: 1, max: 10_000)
        when "count" then value.nil? ? nil : @checker.integer!(value, key, min: 1, max: 1_000_000_000_000)
        when "think" then value.nil? || value == AUTO ? nil : @checker.duration!(value, key)
        when "warmup_count" then value.nil? || value == AUTO ? nil : @checker.integer!(value, key, min: 0, max: 1_000_000_000_000)
        when "host" then load_host(value, key)
        when "tls", "tls_resume" then @checker.boolean!(value, key)
        when "workload" then @checker.one_of!(value, key, WebSocketLoad::WORKLOADS, "workload")
        when "clients" then @checker.integer!(value, key, min: 1, max: WebSocketLoad::MAX_CLIENTS)
        when "ramp" then @checker.duration!(value, key)
        when "interval" then @checker.duration!(value, key, min_s: 0.001)
        when "broadcaster" then @checker.one_of!(value, key, WebSocketLoad::BROADCASTERS, "broadcaster")
        when "message_bytes" then @checker.integer!(value, key, min: 1, max: WsLoadSettings::MAX_MESSAGE_BYTES)
        end
      end

      # The +env+ mapping: Hash of variable name => Array of String.
      def env(value)
        @checker.mapping!(value, "env").to_h do |name, values|
          key = "env.#{name}"
          @checker.env_name!(name, key)
          [name, @checker.list!(values, key) { |v, k| @checker.env_value!(v, k) }.freeze]
        end.freeze
      end

      # +pass_env+: names of variables the servers take from the shell
      # rackbench runs in (secrets such as DATABASE_URL); Array of String.
      def pass_env(value)
        return [].freeze if value == []

        @checker.list!(value, "pass_env") { |name, key| @checker.env_name!(name, key) }.freeze
      end

      # Without +load.connections+, every configuration gets the same
      # number of connections: twice the most server threads any
      # configuration has (max processes x max threads), at least 16. The
      # same client for every configuration keeps them comparable, and two
      # connections per server thread keep every thread busy while the
      # previous response is in flight.
      def default_connections(processes, threads)
        [MIN_DEFAULT_CONNECTIONS, 2 * processes.max * threads.max].max
      end

      # An instructions experiment's connections when the file gives none.
      def instructions_connections(processes)
        processes.max > 1 ? INSTRUCTIONS_CONNECTIONS_PER_PROCESS * processes.max : INSTRUCTIONS_CONNECTIONS
      end

      private

      def load_values(name, value)
        # null in a list is a value (rate: [null, 500] compares closed and
        # open loop); a lone null means the default.
        return [LOAD_DEFAULTS.fetch(name)] if value.nil? && LOAD_DEFAULTS.key?(name)

        @checker.list!(value, "load.#{name}") { |item, key| load_value(name, item, key) }
      end

      # load.host: nil (or "local") for the engine beside the server, else
      # a load host's ssh:// URL, as written.
      def load_host(value, key)
        return nil if value.nil? || value == LOCAL_HOST

        url = @checker.string!(value, key)
        RemoteHost.parse(url)
        url
      rescue ArgumentError => e
        @checker.fail!(key, "#{e.message} (or local, the engine beside the server)")
      end

      def rate(value, key)
        return nil if value.nil?

        ok = value.is_a?(Numeric) && value.positive? && value.to_f.finite?
        @checker.fail!(key, "must be requests/s > 0 or null (closed loop), got #{value.inspect}") unless ok
        value.to_f
      end

      # load.headers: a mapping Name => value, sent with every request; kept
      # as the engine's "Name: value" lines, sorted by name.
      def headers(value, key)
        @checker.mapping!(value, key).map do |name, v|
          name_key = "#{key}.#{name}"
          @checker.fail!(name_key, "is not a valid header name") unless name.to_s.match?(HEADER_NAME)
          if RESERVED_HEADERS.include?(name.to_s.downcase)
            hint = name.to_s.casecmp?("cookie") ? "use load.preset_cookies" : "the engine sets it"
            @checker.fail!(name_key, "cannot be set (#{hint})")
          end
          text = scalar_text(v, name_key)
          @checker.fail!(name_key, "must not contain line breaks or control characters") if text.match?(/[\x00-\x08\x0a-\x1f\x7f]/)
          "#{name}: #{text}"
        end.sort.freeze
      end

      # load.preset_cookies: a mapping name => value put in every connection
      # slot's cookie jar at the start; kept as "name=value", sorted.
      def preset_cookies(value, key)
        @checker.mapping!(value, key).map do |name, v|
          name_key = "#{key}.#{name}"
          @checker.fail!(name_key, "is not a valid cookie name") unless name.to_s.match?(COOKIE_NAME)
          text = scalar_text(v, name_key)
          @checker.fail!(name_key, "must not contain ; or control characters") if text.match?(/[;\x00-\x1f\x7f]/)
          @checker.fail!(name_key, "is longer than 4096 bytes with its name") if "#{name}=#{text}".bytesize > 4096
          "#{name}=#{text}"
        end.sort.freeze
      end

      def scalar_text(value, key)
        return value.to_s if value.is_a?(String) || value.is_a?(Numeric) || value == true || value == false

        @checker.fail!(key, "must be a string, got #{value.inspect[0, 40]}")
      end

      # Request list files are resolved against the experiment file's
      # directory, so the experiment runs the same from any directory.
      def requests_file(value, key)
        return nil if value.nil?

        path = -File.expand_path(@checker.string!(value, key), @base_dir)
        @checker.fail!(key, "#{value.inspect} not found (#{path})") unless File.file?(path)
        path
      end
    end
  end
end
