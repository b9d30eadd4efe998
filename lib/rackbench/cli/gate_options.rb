# frozen_string_literal: true

module Rackbench
  module CLI
    # What `gate` and `compare` share as a gate: the thresholds
    # (--fail-on), the Markdown summary (--markdown) and the exit codes of
    # the gate's statuses (doc/ci.md, "Exit codes").
    module GateOptions
      EXIT_CODES = { Gate::OK => CLI::EXIT_OK, Gate::REGRESSED => CLI::EXIT_REGRESSED,
                     Gate::CANNOT_SAY => CLI::EXIT_CANNOT_SAY }.freeze

      # The exit code of a gate's status.
      def self.exit_code(status)
        EXIT_CODES.fetch(status)
      end

      private

      def gate_options(parser, options)
        parser.on("--fail-on RULE", "a threshold FIGURE>PCT, e.g. rps>2%, p99>10%, cpu>5% (repeatable or " \
                                    "comma-separated; figures: #{Report::BatchFigures.names.join(", ")}; " \
                                    "default #{Gate::DEFAULT_RULES.join(",")})") do |v|
          (options[:fail_on] ||= []) << v
        end
        parser.on("--strict", "cannot say (exit #{CLI::EXIT_CANNOT_SAY}) unless every interval rules out a " \
                              "regression beyond its threshold") { options[:strict] = true }
        parser.on("--markdown FILE", "write the gate's summary in Markdown to FILE, for a pull request " \
                                     "('-': standard output)") { |v| options[:markdown] = v }
      end

      def gate?(options)
        options[:fail_on] || options[:markdown]
      end

      # The Gate's keywords: its rules and whether it is strict.
      def gate_settings(options)
        { rules: Gate::Rule.parse_all(options[:fail_on] || Gate::DEFAULT_RULES), strict: options[:strict] || false }
      end

      # Writes the Markdown summary when asked for; returns the gate's exit code.
      def write_gate_markdown(gate, options)
        path = options[:markdown]
        if path
          text = Gate::Markdown.new(JSON.parse(JSON.generate(gate.to_h))).render
          path == "-" ? @out.print(text) : HtmlReport::Frame.write(path, text, what: "the gate's summary")
        end
        GateOptions.exit_code(gate.status)
      end

      # The status line and its reasons, one each.
      def gate_status_lines(gate)
        ["rackbench gate: #{gate.status}: #{gate.summary} (exit #{GateOptions.exit_code(gate.status)})",
         *gate.reasons.map { |reason| "  #{reason}" }]
      end
    end
  end
end
