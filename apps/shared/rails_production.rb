# frozen_string_literal: true

# The settings the built-in Rails apps share: production as a generated
# Rails app configures it, minus what would need files or services the
# benchmark does not have (credentials, assets, a cache server).
module RailsProduction
  # A fixed secret, so no credentials file or master key is needed. These
  # apps sign nothing of value: the secret only has to be stable across the
  # processes of one server.
  SECRET_KEY_BASE = "rackbench-benchmark-app-not-a-secret-#{"0" * 64}"

  module_function

  def apply(config)
    config.load_defaults "#{Rails::VERSION::MAJOR}.#{Rails::VERSION::MINOR}"
    config.eager_load = true # every class loaded at boot, as in production
    config.enable_reloading = false
    config.consider_all_requests_local = false
    config.secret_key_base = SECRET_KEY_BASE
    config.require_master_key = false
    # Host authorization as a production app has it, allowing the address
    # the servers bind (the engine and the runner's probes send it).
    config.hosts = ["127.0.0.1", "localhost"]
    # No view, fragment or HTTP caching: every request does the whole work.
    config.action_controller.perform_caching = false
    config.cache_store = :null_store
    # No assets: nothing to serve from public/.
    config.public_file_server.enabled = false
    config.active_support.report_deprecations = false
    # Rails 7.2+ turns YJIT on by itself at boot (config.yjit, true in
    # its defaults) on Ruby 3.3+: a variant without --yjit would then run
    # YJIT, and its trials would fail the identity check. Here the ruby
    # variant decides, as it does for every other app.
    config.yjit = false if config.respond_to?(:yjit=)
    logging(config)
  end

  # What a generated Rails 7.1+ app does in production: info level (one
  # line when a request starts, one per rendered template, one when it
  # completes, no SQL), tagged with the request id, to standard output,
  # which the server's log receives.
  def logging(config)
    config.log_level = :info
    config.log_tags = [:request_id]
    config.logger = ActiveSupport::TaggedLogging.new(ActiveSupport::Logger.new($stdout))
  end
end
