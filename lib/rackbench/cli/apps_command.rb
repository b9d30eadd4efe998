# frozen_string_literal: true

require "json"
require_relative "command"

module Rackbench
  module CLI
    # `rackbench apps`: the benchmark apps shipped with rackbench, what each
    # measures, the path the load engine requests and the check the runner
    # makes before measuring (doc/apps.md).
    class AppsCommand < Command
      def run(argv)
        json = false
        options = {}
        rest = parse_options(argv, "Usage: rackbench apps [--json] [--wide]") do |p|
          p.on("--json", "print JSON") { json = true }
          wide_option(p, options)
        end
        return CLI::EXIT_OK unless rest
        raise UsageError, "unexpected argument '#{rest.first}'" unless rest.empty?

        apps = Apps.all
        if json
          @out.puts JSON.pretty_generate(apps.map { |app| describe(app) })
        else
          rows = apps.map { |app| [app.name, app.description, load_text(app), check_text(app)] }
          @out.puts Text::Table.new(headings: ["app", "measures", "load", "check"], rows: rows,
                                    width: output_width(options)).to_s
        end
        CLI::EXIT_OK
      end

      private

      def describe(app)
        {
          "name" => app.name, "description" => app.description, "dir" => app.dir, "base" => app.base,
          "health" => app.health, "load_path" => app.load_path,
          "requests" => app.requests && File.basename(app.requests),
          "check" => { "status" => app.expect_status, "content_type" => app.expect_content_type,
                       "body" => app.expect_body },
          "setup" => app.setup && File.basename(app.setup), "engines" => app.engines,
          "max_error_rate" => app.max_error_rate, "services" => app.services.map(&:canonical)
        }
      end

      # What the load requests, and the services the app gets.
      def load_text(app)
        text = app.requests ? "#{File.basename(app.requests)} (request list)" : "GET #{app.load_path}"
        app.services.empty? ? text : "#{text} on #{app.services.map(&:name).join(", ")}"
      end

      def check_text(app)
        [app.expect_status, app.expect_content_type, app.expect_body&.inspect].compact.join(", ")
      end
    end
  end
end
