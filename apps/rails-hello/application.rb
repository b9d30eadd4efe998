# frozen_string_literal: true

# rails-hello: the smallest Rails app that is still a Rails app as
# production runs one: the full middleware stack, routing, a controller
# inheriting ActionController::Base, production logging. What it costs
# over rack-hello is the "Rails tax".
require "rails"
require "action_controller/railtie"
require_relative "../shared/rails_production"

class RailsHello < Rails::Application
  config.root = __dir__
  RailsProduction.apply(config)

  routes.append do
    get "/up" => "rails/health#show"
    root "hello#index"
  end
end

Rails.application.initialize!
