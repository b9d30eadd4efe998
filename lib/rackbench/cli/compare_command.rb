# frozen_string_literal: true

require "json"
require_relative "command"
require_relative "report_options"

module Rackbench
  module CLI
    # `rackbench compare A B`: B against A, with the ratio of median
    # throughputs, its bootstrap interval and a verdict, for
    #
    # * two configurations of one experiment: A and B are dimension=value
    #   specs ('server=puma' 'server=falcon'); every configuration matching
    #   A is paired with the one that differs only by B's values;
    # * two experiments (before and after a patch): A and B are each an
    #   experiment name, an experiment id, or a results directory (its latest
    #   experiment). Configurations are paired by their dimensions, leaving
    #   out a dimension that has one value in each experiment but not the
    #   same one (the ruby label "ruby" against "ruby-patched").
    class CompareCommand < Command
      include ReportOptions

      def run(argv)
        options = { results: CLI::DEFAULT_RESULTS_DIR, report: {} }
        rest = parse_options(argv, "Usage: rackbench compare [options] A B") do |p|
          p.separator "A and B: configuration specs such as 'ruby=3.1 threads=4', or experiments " \
                      "(a name, an id, or a results directory)."
          results_options(p, options)
          p.on("--json", "print the comparison as JSON") { options[:json] = true }
          statistics_options(p, options[:report])
        end
        return CLI::EXIT_OK unless rest
        raise UsageError, "compare takes two arguments, A and B (see rackbench compare --help)" unless rest.size == 2

        @statistics = Report::Options.new(**options[:report])
        pairs = rest.all? { |a| a.include?("=") } ? config_pairs(options, *rest) : experiment_pairs(options, *rest)
        print_pairs(pairs, options)
        CLI::EXIT_OK
      end

      private

      Pair = Struct.new(:label, :a, :b, :comparison, keyword_init: true)

      def config_pairs(options, spec_a, spec_b)
        @a_name = spec_a
        @b_name = spec_b
        with_store(options) do |store|
          report = Report.new(store, experiment_id: options[:id], name: options[:experiment], **options[:report])
          a_values = parse_spec(spec_a, report)
          b_values = parse_spec(spec_b, report)
          matches = report.configs.select { |c| matches?(c, a_values) }
          raise UsageError, "no configuration matches '#{spec_a}'" if matches.empty?

          pairs = matches.filter_map do |a|
            target = formatted(a.dims).merge(b_values)
            b = report.configs.find { |c| formatted(c.dims) == target }
            b && !b.equal?(a) ? pair(a, b, report.dimensions - a_values.keys - b_values.keys) : nil
          end
          raise UsageError, "no configuration matching '#{spec_a}' has a partner matching '#{spec_b}'" if pairs.empty?

          pairs
        end
      end

      def experiment_pairs(options, ref_a, ref_b)
        report_a = experiment_report(ref_a, options)
        report_b = experiment_report(ref_b, options)
        changed = changed_dims(report_a, report_b)
        @a_name = experiment_name(report_a, changed)
        @b_name = experiment_name(report_b, changed)
        key = ->(c) { formatted(c.dims).reject { |name, _| changed.include?(name) } }
        shown = (report_a.dimensions | report_b.dimensions) - changed
        pairs = report_a.configs.filter_map do |a|
          b = report_b.configs.find { |c| key.call(c) == key.call(a) }
          b && pair(a, b, shown)
        end
        if pairs.empty?
          raise UsageError, "the two experiments have no configuration in common " \
                            "(#{report_a.experiment[:name]}: #{report_a.configs.first&.id}; " \
                            "#{report_b.experiment[:name]}: #{report_b.configs.first&.id})"
        end
        pairs
      end

      # A dimension with one value in each experiment but not the same one,
      # or with one value in an experiment that the other lacks (after
      # adds env.MALLOC_ARENA_MAX): it is what changed between them, so
      # configurations are paired without it.
      def changed_dims(report_a, report_b)
        values = lambda do |report, name|
          report.configs.select { |c| c.dims.key?(name) }.map { |c| Report.format_dim(c.dims[name]) }.uniq
        end
        names_a = report_a.configs.flat_map { |c| c.dims.keys }.uniq
        names_b = report_b.configs.flat_map { |c| c.dims.keys }.uniq
        (names_a | names_b).select do |name|
          a = values.call(report_a, name)
          b = values.call(report_b, name)
          next a.size <= 1 && b.size <= 1 && a != b if names_a.include?(name) && names_b.include?(name)

          (a + b).size == 1 # present on one side only, with one value there
        end
      end

      # "experiment quick (id 1, /tmp/a/results.db) with ruby=ruby-patched"
      def experiment_name(report, changed)
        e = report.experiment
        dims = report.configs.first&.dims || {}
        what = changed.select { |name| dims.key?(name) }.map { |name| "#{name}=#{Report.format_dim(dims[name])}" }
        "experiment #{e[:name]} (id #{e[:id]}, #{report.store_location})#{" with #{what.join(" ")}" unless what.empty?}"
      end

      # An experiment name, an id (digits), or a results directory.
      def experiment_report(ref, options)
        dir, which = if File.directory?(ref) then [ref, {}]
                     elsif ref.match?(/\A\d+\z/) then [options[:results], { experiment_id: Integer(ref) }]
                     else [options[:results], { name: ref }]
                     end
        with_store(results: dir) { |store| Report.new(store, **which, **options[:report]) }
      end

      def pair(a, b, shown_dims)
        comparison = Stats.compare(a.rps_values, b.rps_values, **@statistics.compare_options)
        label = shown_dims.map { |d| "#{d}=#{Report.format_dim(a.dims[d])}" }.join(" ")
        Pair.new(label: label.empty? ? "all" : label, a: a, b: b, comparison: comparison)
      end

      def parse_spec(text, report)
        names = report.configs.flat_map { |c| c.dims.keys }.uniq
        text.split.to_h do |word|
          name, value = word.split("=", 2)
          raise UsageError, "'#{word}' is not dimension=value (dimensions: #{names.join(", ")})" unless value && names.include?(name)

          [name, value]
        end
      end

      def matches?(config, values)
        dims = formatted(config.dims)
        values.all? { |name, value| dims[name] == value }
      end

      def formatted(dims)
        dims.transform_values { |v| Report.format_dim(v) }
      end

      def print_pairs(pairs, options)
        return @out.puts(JSON.pretty_generate(pairs.map { |p| pair_hash(p) })) if options[:json]

        unit = Report.rate_unit(pairs.flat_map { |p| p.a.trials + p.b.trials })
        headings = ["configuration", "A #{unit}", "B #{unit}", "ratio B/A", "95% CI", "verdict"]
        rows = pairs.map do |p|
          c = p.comparison
          verdict = c.verdict
          verdict += " (#{c.batches_needed} batches to detect #{(@statistics.detect * 100).round(2)}%)" if c.batches_needed
          [p.label, number(p.a.rps_median), number(p.b.rps_median), c.ratio ? format("%.3f", c.ratio) : "-",
           c.ratio_ci ? format("%.3f–%.3f", *c.ratio_ci) : "-", verdict]
        end
        table = ::Terminal::Table.new(headings: headings, rows: rows)
        (1..4).each { |i| table.align_column(i, :right) }
        @out.puts table
        @out.puts "A: #{@a_name}", "B: #{@b_name}"
      end

      def pair_hash(pair)
        c = pair.comparison
        { "label" => pair.label, "a" => summary_hash(pair.a), "b" => summary_hash(pair.b), "ratio" => c.ratio,
          "ratio_ci95" => c.ratio_ci, "verdict" => c.verdict, "verdict_explanation" => c.explanation,
          "batches_needed" => c.batches_needed }
      end

      def summary_hash(config)
        { "id" => config.id, "dims" => config.dims, "batches" => config.batches, "rps_median" => config.rps_median,
          "rps_ci95" => config.rps_ci, "rps_per_batch" => config.rps_values }
      end

      def number(value)
        value ? format("%.1f", value) : "-"
      end
    end
  end
end
