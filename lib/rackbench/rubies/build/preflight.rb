# frozen_string_literal: true

require "shellwords"
require "tmpdir"

module Rackbench
  module Rubies
    module Build
      # What a build needs from the machine, checked before configure runs
      # (seconds, not the minutes a build takes to fail): the tools, and
      # the headers of the libraries whose extensions every benchmarked
      # app loads. Without libyaml's header, Ruby's configure does not stop:
      # it builds a ruby without psych, which then fails in Bundler or Rails
      # at the first trial. Each missing header is named with the Debian
      # package that provides it.
      module Preflight
        # header => [Debian package, the extension that needs it and why it matters]
        HEADERS = {
          "yaml.h" => ["libyaml-dev", "psych (YAML: Bundler, Rails and RubyGems load it)"],
          "openssl/ssl.h" => ["libssl-dev", "openssl (HTTPS, and the digests Rails uses)"],
          "zlib.h" => ["zlib1g-dev", "zlib (RubyGems reads .gem files with it)"],
          "ffi.h" => ["libffi-dev", "fiddle"]
        }.freeze
        # extension => Debian package, for the check of a finished build.
        EXTENSIONS = { "psych" => "libyaml-dev", "openssl" => "libssl-dev", "zlib" => "zlib1g-dev",
                       "fiddle" => "libffi-dev" }.freeze
        TIMEOUT_S = 60

        # Raises BuildError (one line, every missing piece with its
        # package) when a tool or a header is missing. env is the build's
        # environment (its CC, CPPFLAGS and CFLAGS are the compiler's).
        # needs_autoconf: the source has no configure script (a git
        # checkout). needs_patch: the recipe has patches.
        def self.check!(env:, ruby:, needs_autoconf: false, needs_patch: false)
          missing = missing_tools(env, needs_autoconf, needs_patch) + missing_headers(env)
          return if missing.empty?

          packages = missing.map(&:last).uniq
          raise BuildError, "ruby '#{ruby}' build: #{missing.map(&:first).join("; ")}: install the Debian " \
                            "package#{"s" if packages.size > 1} #{packages.join(" ")} " \
                            "(apt-get install #{packages.join(" ")})"
        end

        # [what is missing, its Debian package] for each tool not on PATH.
        def self.missing_tools(env, needs_autoconf, needs_patch)
          tools = { "make" => "make" }
          tools["autoconf"] = "autoconf" if needs_autoconf
          tools["patch"] = "patch" if needs_patch
          tools.reject { |tool, _| on_path?(tool, env) }.map { |tool, package| ["#{tool} not found", package] }
        end

        # [what is missing, its Debian package] for each header the
        # compiler cannot find.
        def self.missing_headers(env)
          cc = Shellwords.split(env["CC"] || "cc")
          flags = Shellwords.split([env["CPPFLAGS"], env["CFLAGS"]].compact.join(" "))
          HEADERS.filter_map do |header, (package, needed_by)|
            next if header?(cc, flags, header, env)

            ["#{header} not found (#{needed_by} needs it)", package]
          end
        end

        # The extensions of EXTENSIONS that the built ruby cannot load,
        # as [extension, Debian package] pairs.
        def self.unloadable_extensions(ruby_path, env:)
          script = "#{EXTENSIONS.keys.inspect}.each { |e| begin; require e; rescue LoadError; puts e; end }"
          result = Child.run([ruby_path, "-e", script], env: env, timeout_s: TIMEOUT_S)
          return [["ruby", "(it does not run: #{result.output.to_s.lines.last.to_s.strip})"]] unless result.success?

          result.output.lines.map(&:strip).select { |e| EXTENSIONS.key?(e) }.map { |e| [e, EXTENSIONS[e]] }
        end

        def self.header?(cc, flags, header, env)
          source = File.join(Dir.tmpdir, "rackbench-preflight-#{Process.pid}-#{header.tr("/", "_")}.c")
          File.write(source, "#include <#{header}>\n")
          Child.run([*cc, *flags, "-E", "-o", File::NULL, source], env: env, timeout_s: TIMEOUT_S).success?
        rescue SystemCallError
          false
        ensure
          File.delete(source) if source && File.exist?(source)
        end

        def self.on_path?(tool, env)
          env["PATH"].to_s.split(File::PATH_SEPARATOR).any? { |dir| File.executable?(File.join(dir, tool)) }
        end

        private_class_method :missing_tools, :missing_headers, :header?, :on_path?
      end
    end
  end
end
