# frozen_string_literal: true

require "json"
require_relative "command"
require_relative "report_options"

module Rackbench
  module CLI
    # `rackbench regressions`: the regressions publish found in a store
    # (Regressions), listed, shown, and given a state by a person.
    class RegressionsCommand < Command
      include ReportOptions

      USAGE = <<~TEXT
        Usage: rackbench regressions [list] [--state STATES | --all] [--experiment NAME] [--json]
               rackbench regressions show ID [--json]
               rackbench regressions set ID STATE [--note TEXT] [--by NAME] [--json]
               rackbench regressions bisected ID --result FILE [--by NAME]

        The regressions `rackbench publish` found (doc/publish.md). STATE: detected, confirmed, fixed,
        false-positive, accepted. list shows the open ones (detected, confirmed) unless told.

          list       a table of them (--json: their documents)
          show       one in full, with every change of its state
          set        a person's state, with who (--by, default USER@HOST) and why (--note)
          bisected   keep a bisect's JSON result (FILE, or - for standard input) with it
      TEXT

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR }
        rest = parse_options(argv, USAGE) do |p|
          p.on("--results DIR", "results directory (default #{CLI::DEFAULT_RESULTS_DIR})") { |v| options[:results] = v }
          store_option(p, options)
          p.on("--state STATES", "list these states, comma-separated") { |v| options[:states] = v.split(",") }
          p.on("--all", "list every state") { options[:all] = true }
          p.on("--experiment NAME", "list only this experiment's") { |v| options[:experiment] = v }
          p.on("--note TEXT", "why (set)") { |v| options[:note] = v }
          p.on("--by NAME", "who (set, bisected; default: USER@HOST)") { |v| options[:by] = v }
          p.on("--result FILE", "the bisect's JSON document, - for standard input (bisected)") { |v| options[:result] = v }
          p.on("--json", "print JSON") { options[:json] = true }
          wide_option(p, options)
        end
        return CLI::EXIT_OK unless rest

        action, *args = rest
        action ||= "list"
        with_store(options) do |store|
          regressions = Regressions.new(store)
          case action
          when "list" then list(regressions, args, options)
          when "show" then show(regressions.find(one_id(args, "show")), options)
          when "set" then set(regressions, args, options)
          when "bisected" then bisected(regressions, args, options)
          else raise UsageError, "regressions takes list, show, set or bisected, not '#{action}' (see --help)"
          end
        end
        CLI::EXIT_OK
      end

      private

      def list(regressions, args, options)
        raise UsageError, "regressions list takes no argument, got '#{args.first}'" unless args.empty?

        states = if options[:all] then nil
                 elsif options[:states] then options[:states].map { |s| Regressions.state(s) }
                 else Regressions::OPEN
                 end
        found = regressions.all(states: states, experiment: options[:experiment])
        options[:json] ? @out.puts(JSON.pretty_generate(found.map(&:to_h))) : @out.print(Regressions::Terminal.table(found, width: output_width(options)))
      end

      def show(regression, options)
        options[:json] ? @out.puts(JSON.pretty_generate(regression.to_h)) : @out.print(Regressions::Terminal.show(regression))
      end

      def set(regressions, args, options)
        raise UsageError, "regressions set takes ID and STATE (see --help)" unless args.size == 2

        regression = regressions.set(args[0], args[1], by: options[:by] || Regressions.default_by, note: options[:note])
        show(regression, options)
      end

      def bisected(regressions, args, options)
        id = one_id(args, "bisected")
        raise UsageError, "regressions bisected needs --result FILE (or - for standard input)" unless options[:result]

        text = options[:result] == "-" ? $stdin.read : read(options[:result])
        result = begin
          JSON.parse(text)
        rescue JSON::ParserError => e
          raise UsageError, "--result #{options[:result]}: not JSON (#{e.message.lines.first.strip})"
        end
        show(regressions.attach_bisect(id, result, by: options[:by] || Regressions.default_by), options)
      end

      def read(path)
        File.read(path)
      rescue SystemCallError => e
        raise UsageError, "--result #{path}: #{e.message.sub(/ @ .*/, "")}"
      end

      def one_id(args, action)
        raise UsageError, "regressions #{action} takes one ID (see --help)" unless args.size == 1

        args.first
      end
    end
  end
end
