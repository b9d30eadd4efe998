# frozen_string_literal: true

# The server's native WebSocket (the Rack upgrade spec that Iodine and Agoo
# implement): the server owns the socket and calls on_open, on_message and
# on_close; client.write sends a text message.
class UpgradeHandler
  # One connection's handle for the hub.
  Client = Struct.new(:socket) do
    def send_text(text) = socket.write(text)
  end

  def initialize(hub, workload, proof)
    @hub = hub
    @workload = workload
    @proof = proof
  end

  def on_open(socket)
    @client = Client.new(socket)
    socket.write(@proof.call("rack.upgrade")) if @proof
    @hub.join(@client, @workload)
  end

  def on_message(_socket, data)
    @hub.message(@client, @workload, data)
  end

  def on_close(_socket)
    @hub.leave(@client) if @client
  end
end
