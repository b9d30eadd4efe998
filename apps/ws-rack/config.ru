# frozen_string_literal: true

# ws-rack: WebSockets in plain Rack, the floor under Action Cable. Echo and
# broadcast (doc/websockets.md, "What the server must do") through whatever
# the server offers: its own WebSocket (rack.upgrade: Iodine, Agoo),
# async-websocket (Falcon), or the socket taken over (rack.hijack: Puma,
# Passenger) with websocket-driver on an nio4r loop.
require_relative "ws_rack"

run WsRack.new
