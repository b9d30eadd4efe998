# frozen_string_literal: true

# The channel every client of the load engine subscribes to
# (doc/websockets.md): echo transmits the message back to its sender,
# broadcast sends it to every subscriber of the stream.
class BenchmarkChannel < ApplicationCable::Channel
  STREAM = "benchmark"

  def subscribed
    stream_from STREAM
  end

  def echo(data)
    transmit(data.except("action"))
  end

  def broadcast(data)
    ActionCable.server.broadcast(STREAM, data.except("action"))
  end
end
