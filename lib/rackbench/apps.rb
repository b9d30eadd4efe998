# frozen_string_literal: true

require "yaml"

module Rackbench
  # An app a trial can load: a directory with a config.ru and its own
  # Gemfile, plus what the runner checks before measuring it (TechEmpower
  # style: a broken app is never benchmarked).
  #
  # :name :: label in results
  # :dir :: absolute directory holding config.ru and Gemfile
  # :health :: path that must answer 200 before the server counts as ready (default: "/")
  # :load_path :: path the load engine requests (default: "/")
  # :expect_status :: status the load path must answer (default: 200)
  # :expect_content_type :: prefix of its Content-Type, or nil
  # :expect_body :: substring its body must contain, or nil
  # :builtin :: shipped with rackbench (apps/)
  App = Struct.new(:name, :dir, :description, :health, :load_path, :expect_status, :expect_content_type,
                   :expect_body, :builtin, keyword_init: true)

  # The apps shipped with the gem under apps/, each described by its app.yml.
  module Apps
    ROOT = File.expand_path("../../apps", __dir__)
    MANIFEST_KEYS = %w[description health load_path expect_status expect_content_type expect_body].freeze

    module_function

    def names
      return [] unless Dir.exist?(ROOT)

      Dir.children(ROOT).select { |name| File.file?(File.join(ROOT, name, "config.ru")) }.sort
    end

    # The built-in app called name; ConfigError listing the others if none.
    def builtin(name)
      unless names.include?(name)
        raise ConfigError, "unknown app '#{name}'; built-in apps: #{names.join(", ")} (or give a path)"
      end

      dir = File.join(ROOT, name)
      manifest = YAML.safe_load(File.read(File.join(dir, "app.yml")))
      unknown = manifest.keys - MANIFEST_KEYS
      raise ConfigError, "apps/#{name}/app.yml: unknown keys #{unknown.join(", ")}" unless unknown.empty?

      App.new(name: name, dir: dir, builtin: true, health: "/", load_path: "/", expect_status: 200,
              **manifest.transform_keys(&:to_sym))
    end
  end
end
