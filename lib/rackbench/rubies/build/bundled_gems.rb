# frozen_string_literal: true

require "fileutils"
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
      #
      # Every gem fetched is kept in the build cache's gems/ (+kept_in+), and
      # a later build copies it from there: a bisection builds one commit
      # after another from sources that list the same bundled gems, and
      # RubyGems takes minutes to fetch 29 of them through the mirror on a
      # busy machine (its index is read once per command).
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
          listed(dir).reject { |name, version| File.file?(File.join(dir, "gems", gem_file(name, version))) }
        end

        # Fetches the missing gems into dir/gems with the running ruby's
        # RubyGems; returns how many it fetched. Raises BuildError naming
        # the gems when RubyGems cannot get them.
        # the gems it copied from +kept_in+ are not counted.
        def self.fetch(dir, log:, env:, ruby:, kept_in: nil)
          copied = kept_in ? copy_kept(dir, kept_in) : 0
          File.write(log, "# #{copied} bundled gem(s) copied from #{kept_in}\n", mode: "a") if copied.positive?
          wanted = missing(dir)
          return 0 if wanted.empty?

          argv = [RbConfig.ruby, "-S", "gem", "fetch", *wanted.map { |name, version| "#{name}:#{version}" }]
          File.write(log, "# #{argv.join(" ")}\n", mode: "a")
          result = Child.run(argv, env: env, timeout_s: TIMEOUT_S, chdir: File.join(dir, "gems"), log_path: log)
          keep(dir, wanted - missing(dir), kept_in) if kept_in
          still = missing(dir)
          return wanted.size if result.success? && still.empty?

          names = still.map { |name, version| "#{name} #{version}" }
          why = result.timed_out ? "in #{TIMEOUT_S} s" : "(#{describe(result.status)})"
          raise BuildError, "ruby '#{ruby}' build: RubyGems could not fetch the bundled gem#{"s" if names.size > 1} " \
                            "#{names.first(5).join(", ")}#{" and #{names.size - 5} more" if names.size > 5} " \
                            "that `make install` needs #{why} (log: #{log})"
        end

        # Copies into dir/gems each missing gem that +kept_in+ holds;
        # returns how many.
        def self.copy_kept(dir, kept_in)
          missing(dir).count do |name, version|
            kept = File.join(kept_in, gem_file(name, version))
            next false unless File.file?(kept)

            FileUtils.cp(kept, File.join(dir, "gems", gem_file(name, version)))
            true
          end
        end

        # Keeps each fetched gem in +kept_in+: written under a name of this
        # process's own and renamed, so a build running beside this one
        # never copies half a file.
        def self.keep(dir, fetched, kept_in)
          FileUtils.mkdir_p(kept_in)
          fetched.each do |name, version|
            kept = File.join(kept_in, gem_file(name, version))
            next if File.file?(kept)

            partial = "#{kept}.#{Process.pid}.partial"
            FileUtils.cp(File.join(dir, "gems", gem_file(name, version)), partial)
            File.rename(partial, kept)
          end
        end

        def self.gem_file(name, version) = "#{name}-#{version}.gem"

        def self.describe(status)
          status.exited? ? "gem fetch exited with status #{status.exitstatus}" : "gem fetch ended by signal #{status.termsig}"
        end
      end
    end
  end
end
