# frozen_string_literal: true

# POST /broadcast: the HTTP broadcaster (load.broadcaster http) as an
# app's own endpoint would broadcast a change: the JSON body to every
# subscriber of the channel's stream.
class BroadcastsController < ActionController::API
  def create
    ActionCable.server.broadcast(BenchmarkChannel::STREAM, JSON.parse(request.raw_post))
    head :no_content
  end
end
