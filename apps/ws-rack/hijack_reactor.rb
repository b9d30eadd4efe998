# frozen_string_literal: true

require "nio"
require "websocket/driver"

# A server that hands the socket over (rack.hijack: Puma, Passenger): the
# socket is taken whole, websocket-driver speaks the protocol on it, and one
# nio4r loop per process reads every connection, as Action Cable's stream
# event loop does, so that thousands of clients cost no thread each.
class HijackReactor
  READ_BYTES = 16 * 1024

  # One connection: the driver's socket (it writes through #write) and the
  # hub's client (#send_text). Writes from the loop and from a broadcasting
  # request thread are serialised.
  class Connection
    attr_reader :env, :io
    attr_accessor :monitor

    def initialize(env, io)
      @env = env
      @io = io
      @lock = Mutex.new
    end

    def url
      "ws://#{env["HTTP_HOST"]}#{env["REQUEST_URI"] || env["PATH_INFO"]}"
    end

    def write(bytes)
      @lock.synchronize { @io.write(bytes) }
    end

    def driver = @driver ||= WebSocket::Driver.rack(self)

    def send_text(text) = driver.text(text)
  end

  def self.instance
    @lock ||= Mutex.new
    @lock.synchronize do
      # A forked worker starts its own loop: the parent's thread is not in it.
      @instance = nil if @pid != Process.pid
      @pid = Process.pid
      @instance ||= new
    end
  end

  def initialize
    @selector = NIO::Selector.new
    @pending = Queue.new
    @thread = Thread.new { run }
  end

  # Takes the request's socket over and answers the upgrade on it.
  def take(env, hub, workload, proof)
    io = env["rack.hijack"].call
    connection = Connection.new(env, io)
    driver = connection.driver
    driver.on(:open) do
      connection.send_text(proof.call("rack.hijack")) if proof
      hub.join(connection, workload)
    end
    driver.on(:message) { |event| hub.message(connection, workload, event.data) }
    driver.on(:close) { close(connection, hub) }
    driver.start
    @pending << [connection, hub]
    @selector.wakeup
    [-1, {}, []] # the server leaves a hijacked socket alone
  end

  private

  def run
    loop do
      register_pending
      @selector.select(1) { |monitor| read(*monitor.value) }
    end
  end

  def register_pending
    until @pending.empty?
      connection, hub = @pending.pop
      next if connection.io.closed? # closed before its first read

      connection.monitor = @selector.register(connection.io, :r)
      connection.monitor.value = [connection, hub]
    end
  end

  def read(connection, hub)
    data = connection.io.read_nonblock(READ_BYTES, exception: false)
    return if data == :wait_readable

    data.nil? ? close(connection, hub) : connection.driver.parse(data)
  rescue IOError, SystemCallError
    close(connection, hub)
  end

  # The client closed (a close frame, or the socket): out of the hub and
  # the loop. Called on the loop's thread.
  def close(connection, hub)
    hub.leave(connection)
    connection.monitor&.close
    connection.io.close unless connection.io.closed?
  rescue IOError, SystemCallError
    nil
  end
end
