# frozen_string_literal: true

require "rbconfig"

module Rackbench
  module Rubies
    module Build
      # The bundled gems a Ruby installs with itself (minitest, rake,
      # debug, ...), listed with their versions in the source's
      # gems/bundled_gems. A release tarball from ruby-lang.org carries
      # them as gems/NAME-VERSION.gem; Debian's orig tarballs and git
      # checkouts do not, and `make install` would then download them from
      # a host written into Ruby's build files, which fails behind a
      # mirror. So the missing ones are fetched first, through RubyGems
      # (`gem fetch`, with the user's own sources and mirror settings), all
      # in one command.
      module BundledGems
        LIST = File.join("gems", "bundled_gems")
        TIMEOUT_S = 600

        # [name, version] of each gem the source lists (a line of
        # gems/bundled_gems: name, version, repository, and an optional
        # revision that this fetch does not honour: the release is taken).
        def self.listed(dir)
          path = File.join(dir, LIST)
          return [] unless File.file?(path)

          File.readlines(path).filter_map do |line|
            name, version = line.sub(/#.*/, "").split
            [name, version] if name && version
          end
        end

        # The listed gems without their .gem file in gems/.
        def self.missing(dir)
          listed(dir).reject { |name, version| File.file?(File.join(dir, "gems", "#{name}-#{version}.gem")) }
        end

        # Fetches the missing gems into dir/gems with the running ruby's
        # RubyGems; returns how many it fetched. Raises BuildError naming
        # the gems when RubyGems cannot get them.
        def self.fetch(dir, log:, env:, ruby:)
          wanted = missing(dir)
          return 0 if wanted.empty?

          argv = [RbConfig.ruby, "-S", "gem", "fetch", *wanted.map { |name, version| "#{name}:#{version}" }]
          File.write(log, "# #{argv.join(" ")}\n", mode: "a")
          result = Child.run(argv, env: env, timeout_s: TIMEOUT_S, chdir: File.join(dir, "gems"), log_path: log)
          still = missing(dir)
          return wanted.size if result.success? && still.empty?

          names = still.map { |name, version| "#{name} #{version}" }
          raise BuildError, "ruby '#{ruby}' build: RubyGems could not fetch the bundled gem#{"s" if names.size > 1} " \
                            "#{names.first(5).join(", ")}#{" and #{names.size - 5} more" if names.size > 5} " \
                            "that `make install` needs (log: #{log})"
        end
      end
    end
  end
end
