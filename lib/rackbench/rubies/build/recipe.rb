# frozen_string_literal: true

require "digest"
require "json"
require "shellwords"

module Rackbench
  module Rubies
    module Build
      # What defines one build of a ruby from source: the source (a
      # tarball, a tree, a git repository at a ref), the patches applied in
      # order, the extra arguments to configure and the variables (CC,
      # CFLAGS, ...) of every step. Its #key digests what the build's
      # result depends on: the source's content or commit, each patch's
      # content, configure's arguments (rackbench's own among them), the
      # variables, and the compilers that run (the C compiler's and rustc's
      # versions: rustc decides whether YJIT is built). Change any and it
      # is another build; the same recipe anywhere on the machine is the
      # same cached build.
      #
      #   recipe = Recipe.new(name: "3.4-trim", source: "/src/ruby-3.4.5.tar.xz", patches: ["/src/trim.patch"])
      #   recipe.key # => "9c1e0f4b2a7d3e55"
      class Recipe
        # rackbench's part of every configure line: a shared libruby (as
        # Debian's, ruby-build's and most installs are), and no rdoc/ri,
        # which take minutes to generate and which no benchmark reads.
        DEFAULT_CONFIGURE = %w[--enable-shared --disable-install-doc].freeze
        # Bumped when the build's steps change what they produce, so that
        # old cached builds are not taken for new ones.
        SCHEME = 1
        ENV_NAME = /\A[A-Za-z_][A-Za-z0-9_]*\z/.freeze
        TOOL_TIMEOUT_S = 60

        attr_reader :name, :source, :patches, :configure, :env

        # What every trial of a built ruby stores of its build record (the
        # cache's recipe.json): what it was built from and how, not where
        # the build happened to be cached.
        STORED_KEYS = %w[key name version source patches configure env cc rustc].freeze

        def self.stored(record)
          record.slice(*STORED_KEYS)
        end

        # One line of a stored recipe, for "What ran": "built from
        # ruby3.4_3.4.5.orig.tar.xz (sha256 141fb3b0...) + trim.patch (sha256 9c0e...),
        # configure --enable-shared --disable-install-doc, build e11383d5631ff0a4".
        def self.text(stored)
          source = stored["source"] || {}
          from = case source["kind"]
                 when "git" then "#{File.basename(source["path"].to_s)} at #{source["ref"]} (commit #{source["commit"].to_s[0, 12]})"
                 else "#{File.basename(source["path"].to_s)} (sha256 #{source["sha256"].to_s[0, 12]})"
                 end
          patches = Array(stored["patches"]).map { |p| " + #{p["name"]} (sha256 #{p["sha256"].to_s[0, 12]})" }.join
          env = Hash(stored["env"]).map { |k, v| "#{k}=#{v}" }
          "built from #{from}#{patches}, configure #{Array(stored["configure"]).join(" ")}" \
            "#{", #{env.join(" ")}" unless env.empty?}, build #{stored["key"]}"
        end

        # Raises ConfigError naming the ruby and what is wrong.
        #
        # :name :: the label the experiment gives the ruby
        # :source :: absolute path of a tarball, a tree or a git repository
        # :ref :: a git ref of the repository at source (default: nil)
        # :patches :: absolute paths of patches, applied in this order with `patch -p1` (default: [])
        # :configure :: extra arguments to configure, e.g. ["--with-jemalloc"] (default: [])
        # :env :: variables for every step, e.g. { "CC" => "clang", "CFLAGS" => "-O3" } (default: {})
        def initialize(name:, source:, ref: nil, patches: [], configure: [], env: {})
          @name = name.to_s.dup.freeze
          @source = Source.new(File.expand_path(source.to_s), ref: ref&.to_s)
          @patches = Array(patches).map { |p| File.expand_path(p.to_s).freeze }.freeze
          @configure = Array(configure).map { |a| a.to_s.dup.freeze }.freeze
          @env = env.to_h { |k, v| [k.to_s.dup.freeze, v.to_s.dup.freeze] }.freeze
          validate!
        end

        # The argument list configure runs with (before --prefix): rackbench's
        # defaults, then the recipe's own, which win where they disagree.
        def configure_args
          DEFAULT_CONFIGURE + configure
        end

        # What the build's result depends on, as plain data (JSON-ready).
        # Digests the source and every patch, and asks the compilers their
        # versions, once.
        def inputs
          @inputs ||= {
            "scheme" => SCHEME,
            # A git source is its commit: the ref that named it (a branch, a
            # tag, the hash itself) is kept in the record, not the key, so a
            # nightly's build of master and a bisection's of that commit are one.
            "source" => source.identity.except("path", "ref"),
            "patches" => patches.map { |p| { "name" => File.basename(p), "sha256" => Digest::SHA256.file(p).hexdigest } },
            "configure" => configure_args,
            "env" => env.sort.to_h,
            "cc" => compiler_version,
            "rustc" => rustc_version
          }.freeze
        end

        # 16 hex digits of the SHA-256 of #inputs: the build's name in the cache.
        def key
          @key ||= Digest::SHA256.hexdigest(JSON.generate(inputs))[0, 16]
        end

        # The recipe as stored with the build and every trial that ran it:
        # #inputs with the key, the ruby's name and where the source and
        # patches were found.
        def to_h
          inputs.merge("key" => key, "name" => name, "source" => source.identity,
                       "patches" => inputs["patches"].zip(patches).map { |p, path| p.merge("path" => path) })
        end

        # "ruby3.4_3.4.5.orig.tar.xz + malloc-trim.patch, --with-jemalloc": for progress lines.
        def summary
          [source.to_s, *patches.map { |p| "+ #{File.basename(p)}" }].join(" ") +
            (configure.empty? ? "" : ", #{configure.join(" ")}")
        end

        # The variables every build step runs with: the parent's (minus what
        # would leak another ruby into this one, see CleanEnv) and the
        # recipe's.
        def step_env(parent = ENV)
          CleanEnv.clean(parent).merge(env)
        end

        private

        def validate!
          fail!("name must not be empty") if name.empty?
          source.kind # raises for a missing or unusable source
          patches.each do |patch|
            fail!("patch #{patch}: no such file") unless File.file?(patch)
            fail!("patch #{patch}: not readable") unless File.readable?(patch)
          end
          configure.each do |arg|
            fail!("configure argument #{arg.inspect} must start with - (e.g. --with-jemalloc)") unless arg.start_with?("-")
            if arg.match?(/\A--(prefix|exec-prefix)(=|\z)/)
              fail!("configure argument #{arg} is rackbench's: the build is installed into its cache")
            end
          end
          env.each_key { |k| fail!("env: #{k.inspect} is not a variable name (letters, digits and _)") unless k.match?(ENV_NAME) }
        rescue ConfigError => e
          raise e if e.message.start_with?("ruby '")

          fail!(e.message)
        end

        def fail!(message)
          raise ConfigError, "ruby '#{name}' build: #{message}"
        end

        # The first line of `$CC --version` (CC from the recipe, else cc):
        # another compiler, or another version of it, makes another build.
        def compiler_version
          cc = Shellwords.split(step_env["CC"] || "cc")
          version_line([*cc, "--version"]) || fail!("the C compiler `#{cc.join(" ")}` does not run (set CC, or install build-essential)")
        end

        # rustc's version, or nil: configure builds YJIT when it finds a
        # rustc new enough, and leaves it out otherwise.
        def rustc_version
          version_line(["rustc", "--version"])
        end

        def version_line(argv)
          result = Child.run(argv, env: step_env, timeout_s: TOOL_TIMEOUT_S)
          result.success? ? result.output.lines.first.to_s.strip : nil
        rescue SystemCallError
          nil
        end
      end
    end
  end
end
