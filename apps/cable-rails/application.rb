# frozen_string_literal: true

# cable-rails: Action Cable as a Rails app runs it in production: the
# channel's echo and broadcast (doc/websockets.md), the cable mounted at
# /cable, its allowed origins checked, and a POST endpoint that broadcasts
# what it is sent (load.broadcaster http). One process broadcasts through
# the async adapter; with services: [redis] (REDIS_URL) every process
# subscribes through Redis, so a broadcast reaches the clients of all.
require "rails"
require "action_controller/railtie"
require "action_cable/engine"
require_relative "../shared/rails_production"

class CableRails < Rails::Application
  config.root = __dir__
  RailsProduction.apply(config)

  config.action_cable.mount_path = nil # mounted by the routes below
  # The engine's Origin is http://127.0.0.1:PORT, as a browser's on the
  # app's own page would be; any other origin is refused, as in production.
  config.action_cable.allowed_request_origins = [%r{\Ahttp://(127\.0\.0\.1|localhost)(:\d+)?\z}]
  config.action_cable.cable = if ENV["REDIS_URL"]
                                { "adapter" => "redis", "url" => ENV["REDIS_URL"],
                                  "channel_prefix" => "cable_rails" }
                              else
                                { "adapter" => "async" }
                              end

  routes.append do
    get "/up" => "rails/health#show"
    root "home#index"
    post "/broadcast" => "broadcasts#create"
    mount ActionCable.server => "/cable"
  end
end

Rails.application.initialize!
