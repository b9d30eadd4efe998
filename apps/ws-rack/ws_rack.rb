# frozen_string_literal: true

require "json"
require_relative "hub"

# The routes: GET / (the app check), the upgrade on /ws/echo, /ws/broadcast
# and /ws/connect, and POST /broadcast (the HTTP broadcaster). An upgrade
# with ?rackbench_proof=1 is first sent the proof of who served it: this
# process and the server's API (Trial::Ws's identity check).
class WsRack
  BODY = "ws-rack: WebSocket echo and broadcast\n"
  TEXT = { "content-type" => "text/plain" }.freeze
  WORKLOADS = %w[echo broadcast connect].freeze

  def initialize
    @hub = Hub.new
  end

  def call(env)
    path = env["PATH_INFO"]
    return broadcast(env) if path == "/broadcast" && env["REQUEST_METHOD"] == "POST"
    return [200, TEXT.dup, [BODY]] if path == "/"

    workload = path[%r{\A/ws/(\w+)\z}, 1]
    return [404, TEXT.dup, ["no such path\n"]] unless WORKLOADS.include?(workload)

    upgrade(env, workload)
  end

  private

  def broadcast(env)
    body = env["rack.input"].read
    @hub.broadcast(body)
    [204, {}, []]
  end

  # The server's own way first, then Falcon's, then the socket itself.
  def upgrade(env, workload)
    proof = env["QUERY_STRING"].to_s.include?("rackbench_proof=1") ? ->(via) { proof(env, via) } : nil
    if env["rack.upgrade?"] == :websocket
      require_relative "upgrade_handler"
      env["rack.upgrade"] = UpgradeHandler.new(@hub, workload, proof)
      [101, {}, []]
    elsif env.key?("protocol.http.request")
      require_relative "async_adapter"
      AsyncAdapter.call(env, @hub, workload, proof)
    elsif env["rack.hijack?"]
      require_relative "hijack_reactor"
      HijackReactor.instance.take(env, @hub, workload, proof)
    else
      [426, TEXT.dup, ["this server hands over no WebSocket\n"]]
    end
  end

  def proof(env, via)
    JSON.generate("rackbench_proof" => { "pid" => Process.pid, "via" => via,
                                         "server" => env["SERVER_SOFTWARE"].to_s })
  end
end
