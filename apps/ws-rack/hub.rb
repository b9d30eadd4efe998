# frozen_string_literal: true

# The process's WebSocket clients of the broadcast path, and what every
# workload does with a message. A client is anything with #send_text (each
# adapter's connection); sends to one client are its own business.
class Hub
  def initialize
    @lock = Mutex.new
    @receivers = {}
  end

  def join(client, workload)
    @lock.synchronize { @receivers[client] = true } if workload == "broadcast"
  end

  def leave(client)
    @lock.synchronize { @receivers.delete(client) }
  end

  # A client's message: back to it (echo), to every receiver (broadcast),
  # nothing (connect: the clients only hold their connections).
  def message(client, workload, text)
    case workload
    when "echo" then client.send_text(text)
    when "broadcast" then broadcast(text)
    end
  end

  def broadcast(text)
    @lock.synchronize { @receivers.keys }.each do |receiver|
      receiver.send_text(text)
    rescue IOError, SystemCallError
      leave(receiver)
    end
  end
end
