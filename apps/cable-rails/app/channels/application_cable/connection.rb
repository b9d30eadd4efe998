# frozen_string_literal: true

module ApplicationCable
  # A connection asked for it (?rackbench_proof=1: rackbench's identity
  # check, never the load engine's clients) is first sent the proof of who
  # served its upgrade: this process, and the server that handed the
  # socket over.
  class Connection < ActionCable::Connection::Base
    def connect
      return unless request.query_parameters["rackbench_proof"] == "1"

      transmit("rackbench_proof" => { "pid" => Process.pid, "via" => "action_cable",
                                      "server" => request.env["SERVER_SOFTWARE"].to_s,
                                      "adapter" => ActionCable.server.config.cable["adapter"] })
    end
  end
end
