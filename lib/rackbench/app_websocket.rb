# frozen_string_literal: true

module Rackbench
  # Where an app serves WebSockets and how it speaks them (an app.yml's or
  # an experiment's app entry's +websocket:+; doc/apps.md):
  #
  # path :: the path the clients upgrade on ("/cable"); "{workload}" in it
#         stands for the workload's name (a plain server told echo from
#         broadcast by its path: "/ws/{workload}")
  # cable :: whether it speaks Action Cable (actioncable-v1-json) there
  # channel :: Cable: the channel every client subscribes to, with the
  #            actions echo and broadcast (doc/websockets.md)
  # broadcast_path :: the path a POST to broadcasts its body to every client
  #                   (load.broadcaster http), or nil when it has none
# across_processes :: how a broadcast reaches the clients of a server's
#                     other processes: nil (the app sees to it), "none"
#                     (it never does: broadcast needs one process), or a
#                     service's kind (redis: it does when the app has one)
  AppWebSocket = Struct.new(:path, :cable, :channel, :broadcast_path, :across_processes, keyword_init: true)

  # Reopened so that its constants and methods live in the struct.
  class AppWebSocket
    KEYS = %w[path cable channel broadcast_path across_processes].freeze
    WORKLOAD = "{workload}"
    DEFAULT_CHANNEL = "BenchmarkChannel"
    # What a user's own app gets when its entry does not say: a Rails
    # app's Action Cable at its default mount.
    USER_DEFAULT = { "path" => "/cable", "cable" => true }.freeze

    # The AppWebSocket of +value+ (a Hash as written); +fail+ is called
    # with (key, message) and raises.
    def self.parse(value, key, fail:)
      fail.call(key, "must be a mapping (path:, cable:, channel:, broadcast_path:)") unless value.is_a?(Hash)
      unknown = value.keys - KEYS
      fail.call("#{key}.#{unknown.first}", "unknown key; allowed: #{KEYS.join(", ")}") unless unknown.empty?
      cable = value.fetch("cable", false)
      fail.call("#{key}.cable", "must be true or false, got #{cable.inspect}") unless [true, false].include?(cable)
      channel = value.fetch("channel", DEFAULT_CHANNEL)
      unless channel.is_a?(String) && channel.match?(WsLoadSettings::NAME)
        fail.call("#{key}.channel", "must be a channel's class name, got #{channel.inspect}")
      end
      across = value["across_processes"]
      unless across.nil? || across == "none" || Services.names.include?(across)
        fail.call("#{key}.across_processes", "must be none or a service (#{Services.names.join(", ")}), got #{across.inspect}")
      end
      new(path: path(value["path"], "#{key}.path", fail), cable: cable, channel: channel,
          broadcast_path: value["broadcast_path"] && path(value["broadcast_path"], "#{key}.broadcast_path", fail),
          across_processes: across).freeze
    end

    # The path the clients of +workload+ upgrade on.
    def path_for(workload)
      path.gsub(WORKLOAD, workload)
    end

    # Why a broadcast to the clients of +processes+ server processes would
    # reach only some of them with +services+ (the app's Services::Spec
    # list), or nil.
    def broadcast_reason(app_name, processes, services)
      return nil if processes <= 1 || across_processes.nil?
      if across_processes == "none"
        return "#{app_name} relays a broadcast to the clients of its own process: broadcast needs processes 1"
      end
      return nil if services.any? { |service| service.name == across_processes }

      "#{app_name} broadcasts across processes through #{across_processes}: give it services: [#{across_processes}] " \
        "for processes #{processes} (without, each broadcast reaches one process's clients)"
    end

    def self.path(value, key, fail)
      fail.call(key, "required: the path the clients upgrade on, e.g. /cable") if value.nil?
      unless value.is_a?(String) && value.start_with?("/") && !value.match?(/\s/)
        fail.call(key, "must be a path starting with / (e.g. /cable), got #{value.inspect}")
      end
      value.dup.freeze
    end
    private_class_method :path

    def to_h
      super.transform_keys(&:to_s)
    end
  end
end
