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

# SQLite: a writer that finds the database locked waits for the lock
# without holding the GVL. Rails 7.2 hands database.yml's timeout to
# SQLite's own busy timeout, which sleeps inside SQLite with the GVL held:
# under Puma's threads, the thread that holds the write lock then cannot
# run to its commit, and a concurrent reply waited the whole 5 s and
# answered 500 ("database is locked"; 2 of 130 replies in 16 s of the mix
# at 4 connections). The sqlite3 gem's busy_handler_timeout sleeps 1 ms
# at a time outside SQLite instead, as Rails 8 does itself.
module RailsPostsSqliteBusyWait
  def configure_connection
    super
    timeout = @config[:timeout]
    return unless timeout && @raw_connection.respond_to?(:busy_handler_timeout=)

    @raw_connection.busy_handler_timeout = Integer(timeout)
  end
end
ActiveSupport.on_load(:active_record_sqlite3adapter) { prepend RailsPostsSqliteBusyWait }

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
