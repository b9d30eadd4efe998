# frozen_string_literal: true

module Rackbench
  module Rubies
    # Finds the Install an experiment's ruby entry refers to and builds the
    # Variant. A reference is tried, in order, as: an install name ("ruby",
    # "ruby-3.3.0@asdf"); an absolute path; "<engine>-<version>"
    # ("jruby-9.3.9.0"); a version ("3.1.2"); a version prefix ("3.1",
    # "jruby-9.3"), which picks the newest match. Equal matches go to the
    # one discovered first (PATH before managers).
    #
    # A path resolves to the file it names, symlinks resolved, and to
    # nothing else: the discovered install whose Install#path is that file,
    # or else that file probed as itself. Another install that merely
    # reports the same RbConfig.ruby, or that the file execs, is never
    # substituted.
    class Resolver
      def initialize(installs, env:, probe_timeout_s:)
        @installs = installs
        @env = env
        @probe_timeout_s = probe_timeout_s
      end

      # See Rubies.resolve.
      def resolve(spec)
        spec = normalize(spec)
        install = find(spec[:ruby])
        Variant.new(install: install, name: spec[:name], options: spec[:options] || [], env: spec[:env] || {},
                    malloc: spec[:malloc])
      end

      private

      def normalize(spec)
        spec = { ruby: spec } if spec.is_a?(String)
        raise ConfigError, "ruby entry must be a name or a mapping with 'ruby', got #{spec.inspect}" unless spec.is_a?(Hash)

        spec = spec.transform_keys(&:to_sym)
        raise ConfigError, "ruby entry #{spec.inspect} has no 'ruby' (an install name, a version or a path)" if blank?(spec[:ruby])
        raise ConfigError, "ruby '#{spec[:ruby]}': options must be a list" unless spec[:options].nil? || spec[:options].is_a?(Array)
        raise ConfigError, "ruby '#{spec[:ruby]}': env must be a mapping" unless spec[:env].nil? || spec[:env].is_a?(Hash)

        spec
      end

      def blank?(value)
        value.nil? || value.to_s.strip.empty?
      end

      def find(reference)
        reference = reference.to_s
        return by_path(reference) if reference.start_with?("/", "~")

        usable = @installs.select(&:usable?)
        found = usable.find { |i| i.name == reference } || newest(exact(usable, reference)) || newest(prefixed(usable, reference))
        return found if found

        broken = @installs.find { |i| !i.usable? && i.name == reference }
        raise SetupError, "ruby '#{reference}' (#{broken.path}) does not run: #{broken.error}" if broken

        raise ConfigError, "ruby '#{reference}' not found; found: #{names(usable)}"
      end

      def exact(usable, reference)
        usable.select { |i| i.id == reference || i.version == reference }
      end

      def prefixed(usable, reference)
        usable.select { |i| i.id.start_with?("#{reference}.") || i.version.start_with?("#{reference}.") }
      end

      # The highest version; max_by keeps the first of equals.
      def newest(matches)
        matches.max_by { |i| version_key(i.version) }
      end

      def version_key(version)
        Gem::Version.new(version)
      rescue ArgumentError
        Gem::Version.new("0")
      end

      def by_path(reference)
        path = File.expand_path(reference)
        raise ConfigError, "ruby '#{reference}' not found: no such file" unless File.exist?(path)

        real = File.realpath(path)
        install = @installs.find { |i| i.path == real } || probe(real)
        raise SetupError, "ruby '#{reference}' does not run: #{install.error}" unless install.usable?

        install
      end

      # The file probed as itself, under a name no discovered install has
      # (a copy of the PATH ruby is "ruby-3.1.2", or "ruby-3.1.2@explicit"
      # when a manager's 3.1.2 already has that name).
      def probe(real)
        candidate = Locator::Candidate.new(path: real, source: :explicit)
        install = Prober.new(env: @env, timeout_s: @probe_timeout_s).describe(candidate)
        Rubies.name_uniquely([*@installs, install]).last
      end

      def names(usable)
        usable.empty? ? "none" : usable.map(&:name).join(", ")
      end
    end
  end
end
