# frozen_string_literal: true

module Rackbench
  class Runner
    # The Bundler environments of one run, keyed by (app, ruby, server):
    # each is installed at most once per run, and an install that failed is
    # remembered, so the remaining trials of that combination fail at once
    # with the same reason instead of retrying a slow install every time.
    class BundleCache
      # :root :: cache directory of the environments (default: BundleEnv.default_root)
      # :out :: where to say that an install is starting (it can take minutes)
      def initialize(root: nil, out: $stdout)
        @root = root
        @out = out
        @entries = {}
      end

      # The installed BundleEnv for app (an App), variant and adapter;
      # raises SetupError when it cannot be installed.
      def fetch(app, variant, adapter, log_dir:)
        key = [app.dir, variant.install.path, adapter.name]
        entry = (@entries[key] ||= install(app, variant, adapter, log_dir))
        raise entry if entry.is_a?(SetupError)

        entry
      end

      private

      def install(app, variant, adapter, log_dir)
        options = { app_dir: app.dir, variant: variant, gemfile_extra: adapter.gem_lines(variant.install.engine) }
        options[:root] = @root if @root
        bundle = BundleEnv.new(**options)
        log = File.join(log_dir, "bundle-#{app.name}-#{variant.install.name}-#{adapter.name}.log".gsub(/[^\w.-]/, "_"))
        bundle.ensure_installed!(log: log, before_install: lambda do |_|
          @out.puts "Installing gems for #{app.name} on #{variant.install.name} with #{adapter.name} (log: #{log})"
        end)
        bundle
      rescue SetupError => e
        SetupError.new("cannot install gems for #{app.name} + #{adapter.name} on #{variant.install.name}: #{e.message}")
      end
    end
  end
end
