# frozen_string_literal: true

require "json"
require_relative "command"

module Rackbench
  module CLI
    # `rackbench rubies`: the Ruby installations rackbench finds (PATH,
    # rbenv, chruby, asdf, mise, rvm, and paths given, each of those run as
    # itself), deduplicated by what runs, each described by running it.
    class RubiesCommand < Command
      def run(argv)
        if argv.first == "build"
          require_relative "rubies_build_command"
          return RubiesBuildCommand.new(out: @out, err: @err).run(argv.drop(1))
        end

        json = false
        options = {}
        paths = parse_options(argv, "Usage: rackbench rubies [--json] [--wide] [RUBY_PATH...]\n       rackbench rubies build ...") do |p|
          p.separator "Lists the rubies an experiment can name (doc/rubies.md);"
          p.separator "`rackbench rubies build --help` builds one from source."
          p.on("--json", "print JSON") { json = true }
          wide_option(p, options)
        end
        return CLI::EXIT_OK unless paths

        installs = Rubies.discover(extra_paths: paths)
        if json
          @out.puts JSON.pretty_generate(installs.map { |i| i.to_h.transform_keys(&:to_s) })
        else
          @out.puts table(installs, output_width(options))
        end
        CLI::EXIT_OK
      end

      private

      # The path column is shortened in the middle to fit (its ends tell
      # rubies apart).
      def table(installs, width)
        rows = installs.map do |i|
          if i.usable?
            [i.name, i.engine, i.version, i.jit.join(", "), i.source, runs(i)]
          else
            [i.name, "-", "-", "-", i.source, "#{i.path} (does not run: #{i.error})"]
          end
        end
        Text::Table.new(headings: %w[name engine version JIT source path], rows: rows, shrink: { 5 => :middle },
                        width: width).to_s
      end

      # The path, and what the kernel runs when it is not that file (the
      # ruby a wrapper execs, JRuby's JVM).
      def runs(install)
        install.exe.nil? || install.exe == install.path ? install.path : "#{install.path} (runs #{install.exe})"
      end
    end
  end
end
