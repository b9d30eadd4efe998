# frozen_string_literal: true

module Rackbench
  module Rubies
    # Rubies built from source: a release tarball, an unpacked tree or a git
    # repository at a ref, with patches, configure arguments and compiler
    # variables (a Recipe), built once into the cache and reused by every
    # later experiment that names the same recipe. See doc/rubies.md.
    #
    #   recipe = Build::Recipe.new(name: "3.4", source: "/src/ruby-3.4.5.tar.xz")
    #   install = Build.install(recipe, out: $stdout)
    #   install.path   # => "~/.cache/rackbench/rubies/9c1e0f4b2a7d3e55/prefix/bin/ruby"
    #   install.recipe # => { "key" => "9c1e0f4b2a7d3e55", "source" => {...}, "patches" => [], ... }
    module Build
      autoload :BundledGems, File.expand_path("build/bundled_gems", __dir__)
      autoload :Builder, File.expand_path("build/builder", __dir__)
      autoload :Cache, File.expand_path("build/cache", __dir__)
      autoload :Patches, File.expand_path("build/patches", __dir__)
      autoload :Preflight, File.expand_path("build/preflight", __dir__)
      autoload :Progress, File.expand_path("build/progress", __dir__)
      autoload :Recipe, File.expand_path("build/recipe", __dir__)
      autoload :Source, File.expand_path("build/source", __dir__)
      autoload :Timings, File.expand_path("build/progress", __dir__)

      # The Install of recipe's build, named after the recipe: from the
      # cache, or built first (minutes: progress on out). The process then
      # holds the build (CacheUse) until it exits. Raises ConfigError for a
      # recipe whose source or patches cannot be read, BuildError for a
      # build that fails (one line: the step, the reason, the log).
      #
      # :out :: where progress goes (default: $stdout)
      # :tty :: redraw progress lines in place (default: false)
      # :user :: the results directory of the run that uses it, recorded for `rackbench cache` (default: nil)
      # :cache :: the Cache (default: Cache.new, under the cache root)
      # :parent_env :: the environment the build's steps and the probe start from (default: ENV)
      def self.install(recipe, out: $stdout, tty: false, user: nil, cache: Cache.new, parent_env: ENV,
                       probe_timeout_s: PROBE_TIMEOUT_S)
        waiting = lambda do |holder, waited_s|
          who = holder&.pid ? "pid #{holder.pid}" : "another process"
          out.puts "Waiting for #{who}, which is building ruby '#{recipe.name}' (#{waited_s.round} s so far; " \
                   "its logs: #{holder&.log || cache.log_dir(recipe.key)})"
        end
        outcome = cache.fetch(recipe, user: user, waiting: waiting) do |dir|
          progress = Progress.new(out: out, timings: cache.timings, tty: tty)
          Builder.new(recipe, cache: cache, progress: progress, parent_env: parent_env).build(dir)
        end
        install = describe(recipe, cache, parent_env, probe_timeout_s)
        if outcome == :reused
          out.puts "Ruby '#{recipe.name}': the build #{recipe.key} of #{install.recipe["version"]} from the cache " \
                   "(#{install.path})"
        end
        install
      end

      # The Install of a finished build, described by running it.
      def self.describe(recipe, cache, parent_env, probe_timeout_s)
        candidate = Locator::Candidate.new(path: cache.ruby_path(recipe.key), source: :build)
        install = Prober.new(env: parent_env, timeout_s: probe_timeout_s).describe(candidate)
        unless install.usable?
          raise BuildError, "ruby '#{recipe.name}' build #{recipe.key}: the built ruby does not run: #{install.error}"
        end

        # The record of whoever built it, with the source as this recipe
        # names it: one build of a commit serves a branch and a hash (the
        # key is the commit), and a run's labels say the ref it asked for.
        record = cache.record(recipe.key)
        record = record.merge("source" => recipe.source.identity) if record.is_a?(Hash)
        install.with(name: recipe.name, recipe: record)
      end
      private_class_method :describe
    end
  end
end
