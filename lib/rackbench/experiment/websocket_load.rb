# frozen_string_literal: true

module Rackbench
  class Experiment
    # The WebSocket workloads of +load+ (doc/experiment.md, "WebSockets"):
    # which keys of the load section they take, their defaults, and the
    # checks across keys, each failure one line naming the key.
    #
    #   load:
    #     workload: broadcast          # connect, echo or broadcast (http: requests, the default)
    #     clients: [250, 500, 1000]    # WebSocket clients (a list is a dimension)
    #     ramp: 2s                     # their connects spread over (0: an avalanche)
    #     interval: 100ms              # broadcast: one every
    #     broadcaster: client          # broadcast: a client of its own sends them, or http (a POST to the app)
    #     message_bytes: 64            # the body of each message
    #
    # A WebSocket workload is another kind of trial (Trial::Ws): an
    # experiment runs one kind, so http and WebSocket workloads do not mix.
    class WebSocketLoad
      WORKLOADS = %w[http connect echo broadcast].freeze
      WEBSOCKET = (WORKLOADS - %w[http]).freeze
      BROADCASTERS = %w[client http].freeze
      # The engine keeps its clients on one event loop per thread; a
      # single address reaches some 28,000 ports of one server port.
      MAX_CLIENTS = 100_000
      # What a WebSocket experiment gets when the file does not say. The
      # timeout bounds a client's connect and subscription, an echo and
      # the wait for the last broadcast: an avalanche of thousands on a
      # busy 2-CPU machine takes seconds.
      DEFAULTS = { "clients" => 100, "interval" => 1.0, "broadcaster" => "client", "message_bytes" => 64,
                   "timeout" => 10.0 }.freeze
      # Keys of HTTP's requests that a WebSocket run has no use for.
      HTTP_ONLY = %w[connections keepalive requests cookies preset_cookies protocol streams count think warmup_count
                     host tls tls_resume].freeze
      # Keys only a WebSocket workload reads.
      WEBSOCKET_ONLY = %w[clients ramp interval broadcaster message_bytes].freeze
      # The options of Experiment::Config#load they become (LoadRun leaves
      # them out of an HTTP run's settings).
      OPTIONS = %i[workload clients ramp_s interval_s broadcaster message_bytes].freeze

      # Whether a configuration's load (Config#load) is a WebSocket one.
      def self.websocket?(load)
        WEBSOCKET.include?(load[:workload])
      end

      def initialize(checker)
        @checker = checker
      end

      # Checks the keys the +load+ mapping (as written) gives against its
      # workloads; returns whether they are WebSocket ones.
      def check_keys!(load)
        return false unless load.is_a?(Hash)

        workloads = Array(load.fetch("workload", "http"))
        websocket = workloads.any? { |w| WEBSOCKET.include?(w) }
        if websocket && workloads.include?("http")
          @checker.fail!("load.workload", "http and WebSocket workloads (#{WEBSOCKET.join(", ")}) cannot be mixed in " \
                                          "one experiment: they are two kinds of trial")
        end
        websocket ? check_websocket_keys!(load, workloads) : check_http_keys!(load)
        websocket
      end

      # The checks of one configuration's load (Config#load) that a list
      # of values can make: a rate paces echoes only.
      def check_config!(load)
        return unless self.class.websocket?(load)

        if load[:rate] && load[:workload] != "echo"
          @checker.fail!("load.rate", "paces the echo workload's messages: it does not apply to workload " \
                                      "#{load[:workload]} (exclude the combination, or give the rate to echo alone)")
        end
        return if load[:threads] <= load[:clients]

        @checker.fail!("load.threads", "#{load[:threads]} engine threads but only #{load[:clients]} load.clients " \
                                       "(each thread needs one)")
      end

      private

      def check_websocket_keys!(load, workloads)
        given = HTTP_ONLY.find { |key| load.key?(key) }
        if given
          @checker.fail!("load.#{given}", "is a key of HTTP requests: a WebSocket workload (#{workloads.join(", ")}) " \
                                          "does not use it#{" (the clients are load.clients)" if given == "connections"}")
        end
        { "interval" => "broadcast", "broadcaster" => "broadcast", "rate" => "echo" }.each do |key, needs|
          next unless load.key?(key) && !load[key].nil? && !workloads.include?(needs)

          @checker.fail!("load.#{key}", "applies to the #{needs} workload only, not #{workloads.join(", ")}")
        end
      end

      def check_http_keys!(load)
        given = WEBSOCKET_ONLY.find { |key| load.key?(key) }
        return unless given

        @checker.fail!("load.#{given}", "is a key of WebSocket workloads: give load.workload connect, echo or " \
                                        "broadcast")
      end
    end
  end
end
