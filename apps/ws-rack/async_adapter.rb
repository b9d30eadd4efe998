# frozen_string_literal: true

require "async/websocket/adapters/rack"

# Falcon: async-websocket's Rack adapter, a fiber per connection on
# Falcon's reactor.
module AsyncAdapter
  # One connection's handle for the hub: a send from another fiber (a
  # broadcast) is written and flushed at once.
  Client = Struct.new(:connection) do
    def send_text(text)
      connection.send_text(text)
      connection.flush
    end
  end

  module_function

  def call(env, hub, workload, proof)
    Async::WebSocket::Adapters::Rack.open(env) do |connection|
      client = Client.new(connection)
      client.send_text(proof.call("async-websocket")) if proof
      hub.join(client, workload)
      begin
        while (message = connection.read)
          hub.message(client, workload, message.buffer)
        end
      ensure
        hub.leave(client)
      end
    end || [400, { "content-type" => "text/plain" }, ["not a WebSocket upgrade\n"]]
  end
end
