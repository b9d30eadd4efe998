# frozen_string_literal: true

# rails-posts: a database-backed page as most Rails apps serve them:
# ActiveRecord on SQLite (or on PostgreSQL: rails-posts-pg), a list of N posts with their authors rendered
# through an ERB layout and a partial per post, no caching of any kind;
# plus a JSON variant, a post page, a login form and replies (the session
# mix). Forgery protection is Rails' default for ActionController::Base
# (protect_from_forgery with: :exception, from load_defaults): a POST
# without the session's authenticity token gets 422.
require "rails"
require "active_record/railtie"
require "action_controller/railtie"
require "action_view/railtie"
require_relative "../shared/rails_production"
require_relative "posts_db"

unless PostsDb.postgresql? || File.file?(PostsDb.path)
  abort "rails-posts: no database at #{PostsDb.path}: run setup.rb first (bundle exec ruby setup.rb)"
end

class RailsPosts < Rails::Application
  config.root = __dir__
  RailsProduction.apply(config)
  # The schema is setup.rb's: nothing to migrate, nothing to dump.
  config.active_record.dump_schema_after_migration = false

  routes.append do
    get "/up" => "rails/health#show"
    root "posts#index"
    resources :posts, only: %i[index show] do
      resources :replies, only: :create
    end
    get "/login" => "sessions#new"
    post "/login" => "sessions#create"
  end
end

Rails.application.initialize!
