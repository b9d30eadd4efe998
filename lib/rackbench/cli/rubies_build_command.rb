# frozen_string_literal: true

require "json"
require_relative "command"

module Rackbench
  module CLI
    # `rackbench rubies build`: builds rubies from source ahead of a run,
    # into the cache every experiment then reuses (doc/rubies.md). Either
    # one source with its options, or an experiment file whose `build:`
    # rubies are all built.
    class RubiesBuildCommand < Command
      BANNER = "Usage: rackbench rubies build SOURCE [options]\n       rackbench rubies build EXPERIMENT.yml [--json]"

      def run(argv)
        options = { patches: [], configure: [], env: {} }
        rest = parse_options(argv, BANNER) do |p|
          p.separator "Builds a ruby from a release tarball, an unpacked tree or a git repository (with --ref),"
          p.separator "or every ruby an experiment file builds; cached, so an experiment then starts at once."
          p.on("--name NAME", "the ruby's name (default: the source's file name)") { |v| options[:name] = v }
          p.on("--ref REF", "a commit, tag or branch of the git repository SOURCE") { |v| options[:ref] = v }
          p.on("--patch FILE", "a patch to apply (-p1), in order; repeat for more") { |v| options[:patches] << v }
          p.on("--configure ARG", "an extra argument to configure; repeat for more") { |v| options[:configure] << v }
          p.on("--env VAR=VALUE", "a variable for every build step (CC, CFLAGS, ...); repeat for more") do |v|
            name, value = v.split("=", 2)
            raise UsageError, "--env needs VAR=VALUE, got #{v.inspect}" unless value

            options[:env][name] = value
          end
          p.on("--json", "print the built rubies as JSON") { options[:json] = true }
          wide_option(p, options)
        end
        return CLI::EXIT_OK unless rest
        raise UsageError, "#{BANNER}\n(give one SOURCE or EXPERIMENT.yml)" unless rest.size == 1

        installs = recipes(rest.first, options).map { |recipe| Rubies::Build.install(recipe, out: progress_out(options)) }
        print_installs(installs, options)
        CLI::EXIT_OK
      end

      private

      def recipes(arg, options)
        if arg.match?(/\.ya?ml\z/) && File.file?(arg)
          builds = Experiment.load(arg).rubies.filter_map(&:build)
          raise UsageError, "#{arg} builds no ruby from source (no rubies entry has build:)" if builds.empty?

          return builds
        end

        name = options[:name] || File.basename(arg).sub(Rubies::Build::Source::TARBALL, "")
        [Rubies::Build::Recipe.new(name: name, source: arg, ref: options[:ref], patches: options[:patches],
                                   configure: options[:configure], env: options[:env])]
      end

      # With --json, progress goes to stderr and only the JSON to stdout.
      def progress_out(options)
        options[:json] ? @err : @out
      end

      def print_installs(installs, options)
        if options[:json]
          @out.puts JSON.pretty_generate(installs.map { |i| i.to_h.transform_keys(&:to_s) })
          return
        end

        rows = installs.map do |i|
          recipe = i.recipe
          [i.name, i.version, i.jit.join(", "), recipe["key"], BundleEnv::Progress.duration(recipe["duration_s"].to_f), i.path]
        end
        @out.puts Text::Table.new(headings: ["name", "version", "JIT", "build", "build time", "path"], rows: rows,
                                  shrink: { 5 => :middle }, width: output_width(options)).to_s
      end
    end
  end
end
