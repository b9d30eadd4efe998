# frozen_string_literal: true

# The app check's page: proves the Rails app answers before its cable does.
class HomeController < ActionController::Base
  def index
    render plain: "cable-rails: Action Cable's BenchmarkChannel at /cable (#{ActionCable.server.config.cable["adapter"]})\n"
  end
end
