# frozen_string_literal: true

module Rackbench
  class BundleEnv
    # Picks the line that explains a failed Bundler or RubyGems command out
    # of its output. Bundler ends a failure with context ("In Gemfile:",
    # the gem's name), so the last line alone often says nothing; the last
    # line that reads like an error is better, the last non-blank line the
    # fallback.
    module Failure
      ERROR_LINE = /error|could not|cannot|can't|failed|not found|conflict|incompatible|denied|requires/i.freeze
      MAX_CHARS = 300

      def self.reason(output)
        lines = output.to_s.lines.map(&:strip).reject { |line| line.empty? || line.start_with?("==") }
        line = lines.reverse.find { |l| l.match?(ERROR_LINE) } || lines.last || "no output"
        line[0, MAX_CHARS]
      end
    end
  end
end
