# frozen_string_literal: true

module Rackbench
  class Report
    # B against A (`rackbench compare A B`): pairs of configurations, each
    # with the ratio of B's median throughput to A's, its bootstrap
    # interval and a verdict (Stats.compare, judged by the reports'
    # Options). Pairs come from
    #
    # * two configurations of one experiment (Compare.configurations): A
    #   and B are dimension=value specs ('server=puma' 'server=falcon');
    #   every configuration matching A is paired with the one that differs
    #   only by B's values;
    # * two experiments (Compare.experiments, before and after a patch):
    #   configurations are paired by their dimensions, leaving out a
    #   dimension that has one value in each experiment but not the same
    #   one (the ruby label "ruby" against "ruby-patched").
    #
    #   compare = Rackbench::Report::Compare.configurations(report, "server=puma", "server=falcon")
    #   puts compare.terminal_table
    #   JSON.generate(compare.to_a) # doc/output.md, "The comparison"
    class Compare
      # One pair: +label+ (the dimensions that tell it from the other
      # pairs, "all" when none do), ConfigSummary +a+ and +b+, and their
      # Stats::Comparison.
      # +entries+: the EntryCompare of their request lists' entries, nil
      # when neither has one. +inside+: the InsideCompare of their inside
      # figures, nil unless both have some. +gems+: the gems both sides
      # loaded at different versions (GemDifferences.between); +flags+: a
      # gems_differ flag when some differ and no dimension that chooses
      # gems tells A from B.
      # +diffs+: where the time went between them (Report::Diffs), nil
      # when neither counted instructions nor was profiled.
      Pair = Struct.new(:label, :a, :b, :comparison, :entries, :inside, :gems, :flags, :diffs, keyword_init: true)

      # Two experiments without a configuration in common (Compare.experiments).
      class NothingInCommon < UsageError; end

      # The pairs, in A's report order.
      attr_reader :pairs
      # What A and B are, in words: the specs as given, or the experiments.
      attr_reader :a_name, :b_name
      # The Report::Options that judged the pairs.
      attr_reader :options
      # How the machines of two experiments differ (MachineCheck.differences),
      # when they were compared anyway; nil when they ran on the same machine,
      # or for configurations of one experiment.
      attr_reader :machine_differences

      # Every configuration of +report+ matching +spec_a+ ("server=puma",
      # dimension=value pairs) against the one with +spec_b+'s values and
      # its own for the other dimensions. Raises UsageError for a spec that
      # is not dimension=value pairs of known dimensions, or when nothing
      # matches.
      def self.configurations(report, spec_a, spec_b)
        ConfigPairs.new(report, spec_a, spec_b).compare
      end

      # Each configuration of +report_a+'s experiment against the one of
      # +report_b+'s with the same dimensions, but for those that changed
      # between the experiments (Compare.changed_dimensions). Judged by
      # +report_a+'s options. Raises UsageError when no configuration is in
      # both, and when the two ran on different machines (MachineCheck)
      # unless +different_machines+ says to compare them anyway: the result
      # then says how the machines differ.
      def self.experiments(report_a, report_b, different_machines: false)
        machines = MachineCheck.differences(report_a, report_b)
        if !machines.empty? && !different_machines
          raise UsageError, "A and B ran on different machines (#{MachineCheck.text(machines)}): their ratio would " \
                            "measure the machines too; pass --different-machines to compare them anyway"
        end
        changed = changed_dimensions(report_a, report_b)
        key = ->(c) { formatted(c.dims).reject { |name, _| changed.include?(name) } }
        shown = (report_a.dimensions | report_b.dimensions) - changed
        pairs = report_a.configs.filter_map do |a|
          b = report_b.configs.find { |c| key.call(c) == key.call(a) }
          b && [a, b]
        end
        if pairs.empty?
          raise NothingInCommon, "the two experiments have no configuration in common " \
                            "(#{report_a.experiment[:name]}: #{report_a.configs.first&.id}; " \
                            "#{report_b.experiment[:name]}: #{report_b.configs.first&.id})"
        end
        new(pairs, shown_dims: shown, a_name: experiment_name(report_a, changed),
                   b_name: experiment_name(report_b, changed), options: report_a.options,
                   machine_differences: machines.empty? ? nil : machines, profiles: [report_a.profiles, report_b.profiles])
      end

      # The dimensions that changed between two experiments: one value in
      # each but not the same one, or one value in an experiment that the
      # other lacks (after adds env.MALLOC_ARENA_MAX). Configurations are
      # paired without them.
      def self.changed_dimensions(report_a, report_b)
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
      def self.experiment_name(report, changed)
        e = report.experiment
        dims = report.configs.first&.dims || {}
        what = changed.select { |name| dims.key?(name) }.map { |name| "#{name}=#{Report.format_dim(dims[name])}" }
        "experiment #{e[:name]} (id #{e[:id]}, #{report.store_location})#{" with #{what.join(" ")}" unless what.empty?}"
      end

      # dims with every value as the report writes it ("ruby" => "3.1").
      def self.formatted(dims)
        dims.transform_values { |v| Report.format_dim(v) }
      end
      private_class_method :experiment_name

      # pairs :: [[a, b]] of ConfigSummary
      # :shown_dims :: the dimensions each pair's label names
      # :a_name, :b_name :: what A and B are, in words
      # :options :: the Report::Options judging the pairs
      # :machine_differences :: how the two sides' machines differ, when compared anyway (default: nil)
      # :profiles :: the Report::Profiles of A's and B's report, for the
      #              profile diffs (default: none)
      def initialize(pairs, shown_dims:, a_name:, b_name:, options:, machine_differences: nil, profiles: [nil, nil])
        @options = options
        @machine_differences = machine_differences
        @a_name = a_name
        @b_name = b_name
        @pairs = pairs.map do |a, b|
          comparison = Stats.compare(a.rps_values, b.rps_values, **options.compare_options)
          label = shown_dims.map { |d| "#{d}=#{Report.format_dim(a.dims[d])}" }.join(" ")
          inside = a.inside && b.inside ? InsideCompare.new(a.inside, b.inside, options) : nil
          gems = GemDifferences.between(a.gems, b.gems)
          diffs = Diffs.between(a, b, options, a_profiles: profiles[0], b_profiles: profiles[1])
          Pair.new(label: label.empty? ? "all" : label, a: a, b: b, comparison: comparison,
                   entries: EntryCompare.of(a, b, options), inside: inside, gems: gems, flags: gem_flags(a, b, gems),
                   diffs: diffs)
        end
      end

      # A gems_differ flag for a pair whose gems differ although nothing
      # that chooses gems differs between its sides ([] otherwise).
      def gem_flags(a, b, gems)
        return [] if gems.empty? || GemDifferences.explained?(a.dims, b.dims)

        [{ "kind" => "gems_differ", "gems" => gems.map(&:first),
           "message" => "A and B loaded other gems, and no gem is a dimension here: " \
                        "#{GemDifferences.text(gems, a_name: "A", b_name: "B")}" }]
      end

      # What the throughput counts: "msg/s" when every trial compared is a
      # micro-benchmark, else "req/s".
      def rate_unit
        Report.rate_unit(@pairs.flat_map { |p| p.a.trials + p.b.trials })
      end

      # The comparison document (doc/output.md): one Hash per pair.
      def to_a
        @pairs.map do |pair|
          c = pair.comparison
          { "label" => pair.label, "a" => side(pair.a), "b" => side(pair.b), "ratio" => c.ratio,
            "ratio_ci95" => c.ratio_ci, "verdict" => c.verdict, "verdict_explanation" => c.explanation,
            "batches_needed" => c.batches_needed, "entries" => pair.entries&.to_h, "inside" => pair.inside&.to_h,
            "machines_differ" => @machine_differences,
            "gems_differ" => pair.gems.map { |name, a, b| { "gem" => name, "a" => a, "b" => b } },
            "flags" => pair.flags, "diffs" => pair.diffs&.to_h }
        end
      end

      # The comparison as a terminal table, then what A and B are.
      def terminal_table(width: nil)
        CompareTerminal.new(self, width: width).render
      end

      private

      def side(config)
        { "id" => config.id, "dims" => config.dims, "batches" => config.batches, "rps_median" => config.rps_median,
          "rps_ci95" => config.rps_ci, "rps_per_batch" => config.rps_values, "flags" => config.flags }
      end

      # The pairing of two configuration specs within one report.
      class ConfigPairs
        def initialize(report, spec_a, spec_b)
          @report = report
          @spec_a = spec_a
          @spec_b = spec_b
        end

        def compare
          a_values = parse_spec(@spec_a)
          b_values = parse_spec(@spec_b)
          matches = @report.configs.select { |c| matches?(c, a_values) }
          raise UsageError, "no configuration matches '#{@spec_a}'" if matches.empty?

          pairs = matches.filter_map do |a|
            target = Compare.formatted(a.dims).merge(b_values)
            b = @report.configs.find { |c| Compare.formatted(c.dims) == target }
            b && !b.equal?(a) ? [a, b] : nil
          end
          raise UsageError, "no configuration matching '#{@spec_a}' has a partner matching '#{@spec_b}'" if pairs.empty?

          Compare.new(pairs, shown_dims: @report.dimensions - a_values.keys - b_values.keys, a_name: @spec_a,
                             b_name: @spec_b, options: @report.options, profiles: [@report.profiles, @report.profiles])
        end

        private

        def parse_spec(text)
          names = @report.configs.flat_map { |c| c.dims.keys }.uniq
          text.split.to_h do |word|
            name, value = word.split("=", 2)
            raise UsageError, "'#{word}' is not dimension=value (dimensions: #{names.join(", ")})" unless value && names.include?(name)

            [name, value]
          end
        end

        def matches?(config, values)
          dims = Compare.formatted(config.dims)
          values.all? { |name, value| dims[name] == value }
        end
      end
      private_constant :ConfigPairs
    end
  end
end

require_relative "entry_compare"
require_relative "gem_differences"
require_relative "compare_terminal"
require_relative "diffs"
require_relative "machine_check"
