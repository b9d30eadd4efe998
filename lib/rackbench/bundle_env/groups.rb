# frozen_string_literal: true

require "yaml"

module Rackbench
  class BundleEnv
    # Which of the Gemfile's groups an environment installs and loads:
    # Bundler's `without` (groups left out) and `with` (optional groups
    # added). Written into the environment's own .bundle/config, so that
    # `bundle install`, `bundle check` and the server's `bundler/setup` all
    # agree. Part of the environment's digest: another choice is another
    # environment.
    #
    # +without+ and +with+ are sorted Arrays of group names (Strings);
    # +without_from+ and +with_from+ say where each came from ("experiment",
    # "<app>/.bundle/config", "BUNDLE_WITHOUT in the environment",
    # "default for your own app", "none").
    Groups = Struct.new(:without, :with, :without_from, :with_from, keyword_init: true)

    class Groups
      # What a user's own app leaves out when nothing says otherwise: a
      # production server needs neither its tests' nor its developers' gems
      # (capybara, selenium, rubocop), and some cannot even be built here.
      USER_APP_WITHOUT = %w[development test].freeze
      NOWHERE = "none"

      # The choice for a built-in app (and any environment made without a
      # choice): every group, as before groups were honoured.
      def self.all
        new(without: [], with: [], without_from: NOWHERE, with_from: NOWHERE).freeze
      end

      # The groups for an app. For `without`, the first that says anything
      # wins:
      #
      # 1. the experiment's +bundle_without+ for the app (an Array; [] installs every group);
      # 2. the app's own .bundle/config (BUNDLE_WITHOUT; read as YAML, Bundler's format);
      # 3. BUNDLE_WITHOUT in the environment rackbench runs in;
      # 4. [development, test] for a user's own app; nothing for a built-in app.
      #
      # `with` is taken from 2, else 3 (BUNDLE_WITH), else none. The app's
      # file wins over the environment as in Bundler itself, where a local
      # config beats environment variables.
      #
      # :app_dir :: the app's directory
      # :builtin :: whether the app ships with rackbench
      # :bundle_without :: the experiment's list, or nil (default: nil)
      # :parent_env :: the environment rackbench runs in (default: ENV)
      #
      # Raises SetupError naming the file when the app's .bundle/config is
      # not a YAML mapping.
      def self.for_app(app_dir:, builtin:, bundle_without: nil, parent_env: ENV)
        return explicit(bundle_without) if builtin && bundle_without
        return all if builtin

        file = File.join(app_dir, ".bundle", "config")
        config = read_config(file)
        shell = { "BUNDLE_WITHOUT" => parent_env["BUNDLE_WITHOUT"], "BUNDLE_WITH" => parent_env["BUNDLE_WITH"] }
        without, without_from = pick("BUNDLE_WITHOUT", [[config, file], [shell, "BUNDLE_WITHOUT in the environment"]])
        with, with_from = pick("BUNDLE_WITH", [[config, file], [shell, "BUNDLE_WITH in the environment"]])
        without, without_from = [USER_APP_WITHOUT, "default for your own app"] unless without
        without, without_from = [bundle_without, "experiment"] if bundle_without
        new(without: list(without), with: list(with || []), without_from: without_from,
            with_from: with ? with_from : NOWHERE).freeze
      end

      def self.explicit(bundle_without)
        new(without: list(bundle_without), with: [], without_from: "experiment", with_from: NOWHERE).freeze
      end

      # Bundler's list values: "development:test", "development test", or
      # a YAML list.
      def self.list(value)
        items = value.is_a?(Array) ? value.map(&:to_s) : value.to_s.split(/[:\s]+/)
        items.reject(&:empty?).uniq.sort.freeze
      end

      def self.read_config(file)
        return {} unless File.file?(file)

        data = YAML.safe_load(File.read(file))
        return data if data.is_a?(Hash)
        return {} if data.nil?

        raise SetupError, "#{file}: not a YAML mapping of Bundler settings"
      rescue Psych::Exception => e
        raise SetupError, "#{file}: not YAML (#{e.message})"
      end

      # The value of key in the first source that sets it, with its name.
      def self.pick(key, sources)
        sources.each do |settings, from|
          value = settings[key]
          return [value, from] unless value.nil?
        end
        [nil, nil]
      end

      private_class_method :explicit, :read_config, :pick

      def none?
        without.empty? && with.empty?
      end

      # The .bundle/config settings (Bundler's own keys and format).
      def settings
        result = {}
        result["BUNDLE_WITHOUT"] = without.join(":") unless without.empty?
        result["BUNDLE_WITH"] = with.join(":") unless with.empty?
        result
      end

      # JSON-ready, for a trial's record.
      def to_h
        super.transform_keys(&:to_s)
      end
    end
  end
end
