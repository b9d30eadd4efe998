# frozen_string_literal: true

module Rackbench
  class Gate
    # One threshold of the gate: a figure (Report::BatchFigures) and how
    # much worse than the baseline it may get, as a fraction: "rps>2%" is
    # requests/s 2% lower, "p99>10%" the p99 latency 10% higher.
    class Rule
      SYNTAX = /\A\s*([a-z0-9_.]+)\s*>\s*(\d+(?:\.\d+)?)\s*(%?)\s*\z/i

      # figure :: a Report::BatchFigures::Figure
      # limit :: how much worse it may get, a fraction (0.02)
      attr_reader :figure, :limit

      def initialize(figure, limit)
        @figure = figure
        @limit = limit
        freeze
      end

      # The rules of --fail-on values (each "FIGURE>PCT", or several
      # comma-separated), in order, one per figure (a figure given twice
      # keeps its last limit). Raises UsageError naming a bad one.
      def self.parse_all(texts)
        texts.flat_map { |text| text.split(",") }.map { |text| parse(text) }
             .reverse.uniq { |rule| rule.figure.name }.reverse
      end

      # "rps>2%" (or "rps>0.02") => Rule.
      def self.parse(text)
        match = SYNTAX.match(text)
        unless match
          raise UsageError, "--fail-on takes FIGURE>PCT such as rps>2% or p99>10%, got '#{text.strip}' " \
                            "(figures: #{Report::BatchFigures.names.join(", ")})"
        end

        limit = Float(match[2])
        limit /= 100.0 unless match[3].empty?
        raise UsageError, "--fail-on #{text.strip}: the limit must be below 100%" unless limit < 1.0

        new(Report::BatchFigures.fetch(match[1].downcase), limit)
      end

      # "rps>2%"
      def to_s
        "#{figure.name}>#{Units.percent_trimmed(limit)}"
      end

      # "requests/s 2% worse"
      def words
        "#{figure.words} #{Units.percent_trimmed(limit)} worse"
      end

      def to_h
        { "figure" => figure.name, "limit" => limit, "words" => words, "better" => figure.better.to_s }
      end
    end
  end
end
