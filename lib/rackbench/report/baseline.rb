# frozen_string_literal: true

module Rackbench
  class Report
    # Decides what each configuration is compared with, and compares.
    #
    # Without a spec, every configuration is compared with the first one
    # (ConfigOrder: the experiment file's order) that has enough ok batches
    # for a verdict, or failing that any ok batch: a baseline whose trials
    # all failed would leave every row without a verdict. A spec is a list of
    # dimension=value pairs, e.g. "ruby=3.1" or "ruby=3.1 server=puma":
    # each configuration is compared with the one that has the spec's
    # values for those dimensions and its own values for all the others.
    # So "ruby=3.1" compares every ruby with 3.1 on the same server, app,
    # processes and threads; a spec naming every varying dimension picks a
    # single baseline for all.
    class Baseline
      def initialize(configs, options)
        @configs = configs
        @options = options
        @spec = parse(options.baseline)
      end

      def apply
        return if @configs.empty?

        @configs.each do |config|
          base = baseline_for(config)
          config.baseline_config = base
          next if base.nil? || base.equal?(config)

          config.comparison = Stats.compare(base.rps_values, config.rps_values, **@options.compare_options)
        end
      end

      private

      def baseline_for(config)
        return default_baseline if @spec.nil?

        target = formatted(config.dims).merge(@spec)
        @configs.find { |c| formatted(c.dims) == target }
      end

      def default_baseline
        @default_baseline ||= @configs.find { |c| c.batches >= @options.min_batches } ||
                              @configs.find { |c| c.batches.positive? } || @configs.first
      end

      def formatted(dims)
        dims.transform_values { |v| Report.format_dim(v) }
      end

      # {"ruby" => "3.1"} from "ruby=3.1", checked against the dims and
      # values present, so a typo is an error rather than "no baseline"
      # on every row.
      def parse(text)
        return nil if text.nil? || text.strip.empty?

        all = @configs.map { |c| formatted(c.dims) }
        names = all.flat_map(&:keys).uniq
        spec = text.split.to_h do |pair|
          name, value = pair.split("=", 2)
          raise UsageError, "baseline: '#{pair}' is not dimension=value (dimensions: #{names.join(", ")})" unless value

          [name, value]
        end
        spec.each do |name, value|
          raise UsageError, "baseline: unknown dimension '#{name}' (dimensions: #{names.join(", ")})" unless names.include?(name)

          values = all.map { |d| d[name] }.uniq
          raise UsageError, "baseline: no configuration has #{name}=#{value} (values: #{values.join(", ")})" unless values.include?(value)
        end
        spec
      end
    end
  end
end
