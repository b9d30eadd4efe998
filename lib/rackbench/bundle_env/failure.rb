# frozen_string_literal: true

module Rackbench
  class BundleEnv
    # Picks the line that explains a failed Bundler or RubyGems command out
    # of its output. Bundler ends a failure with context ("In Gemfile:",
    # the gem's name), so the last line alone often says nothing; the last
    # line that reads like an error is better, the last non-blank line the
    # fallback.
    #
    # Three failures are worded so that the line names what the ruby cannot
    # run, since they are what a set of gems resolved on another ruby meets:
    #
    # * a gem that does not install ("An error occurred while installing
    #   nokogiri (1.15.0)"): "nokogiri 1.15.0 does not install: " and its
    #   cause (the gem's required_ruby_version, which RubyGems checks, or
    #   the native extension's first compiler error);
    # * no versions that fit ("Could not find compatible versions"):
    #   Bundler's explanation, whose first line names the gem ("Because
    #   every version of foo depends on Ruby < 3.4"), joined into one line;
    # * the Gemfile's `ruby` requirement ("Your Ruby version is 3.4.5, but
    #   your Gemfile specified >= 3.1.0, < 3.4.0").
    module Failure
      ERROR_LINE = /error|could not|cannot|can't|failed|not found|conflict|incompatible|denied|requires/i.freeze
      MAX_CHARS = 300
      GEM_NOT_INSTALLED = /An error occurred while installing (?<name>\S+) \((?<version>[^)]+)\)/.freeze
      # Why a gem did not install, best first: its ruby requirement, a
      # compiler's error, a missing library, then the build's failure.
      CAUSES = [/requires Ruby version/i, /\berror:/, /not found|cannot find|No such file/i,
                /Failed to build gem native extension/i].freeze
      RUBY_MISMATCH = /Your Ruby version is .*, but your Gemfile specified/.freeze
      EXPLANATION = /\ABecause\b/.freeze

      def self.reason(output)
        lines = output.to_s.lines.map(&:strip).reject { |line| line.empty? || line.start_with?("==") }
        line = ruby_mismatch(lines) || gem_not_installed(lines) || explanation(lines) ||
               lines.reverse.find { |l| l.match?(ERROR_LINE) } || lines.last || "no output"
        line[0, MAX_CHARS]
      end

      def self.ruby_mismatch(lines)
        lines.reverse.find { |line| line.match?(RUBY_MISMATCH) }
      end

      def self.gem_not_installed(lines)
        at = lines.rindex { |line| line.match?(GEM_NOT_INSTALLED) }
        return nil unless at

        match = GEM_NOT_INSTALLED.match(lines[at])
        before = lines[0...at]
        cause = CAUSES.lazy.filter_map { |pattern| before.find { |line| line.match?(pattern) } }.first
        "#{match[:name]} #{match[:version]} does not install#{": #{cause}" if cause}"
      end

      # "Because every version of foo depends on Ruby < 3.4 and Gemfile
      # depends on foo = 1.0, Ruby < 3.4 is required. So, because ..."
      def self.explanation(lines)
        start = lines.index { |line| line.match?(EXPLANATION) }
        return nil unless start

        finish = lines.index.with_index { |line, i| i >= start && line.match?(/version solving has failed/) }
        lines[start..(finish || start)].join(" ")
      end

      private_class_method :ruby_mismatch, :gem_not_installed, :explanation
    end
  end
end
