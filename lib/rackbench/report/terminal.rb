# frozen_string_literal: true

require "terminal-table"

module Rackbench
  class Report
    # The report for a terminal: one table of configurations grouped by the
    # first varying dimension (a rule between groups), a verdict column,
    # then a bar chart of median throughput with its interval, and the
    # flags. Plain text unless color is asked for (a TTY).
    class Terminal
      BAR_WIDTH = 40
      # Eighths of a block, for bars finer than one character.
      BLOCKS = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"].freeze
      VERDICT_COLORS = { "faster" => 32, "slower" => 31, "no difference detected" => 33 }.freeze

      def initialize(report, color: false, sort: :order)
        @report = report
        @color = color
        @sort = sort
      end

      def render
        configs = @report.configs
        return "#{@report.experiment[:name]}: no trials stored\n" if configs.empty?

        [warning_lines, table(configs), baseline_line, bar_chart(configs), flag_lines(configs),
         ran_lines(configs)].compact.join("\n") + "\n"
      end

      private

      def dims = @report.dimensions

      def table(configs)
        headings = [*dims, "batches", @report.rate_unit, *("offered" if open_loop?), "95% CI", "CV", "ratio",
                    "ratio 95% CI", "verdict",
                    *(%w[p50 p99 p99.9] if latency?), *("MB/s" if bytes?), "PSS peak", "flags"]
        table = ::Terminal::Table.new(title: title, headings: headings)
        groups(configs).each_with_index do |group, i|
          table.add_separator if i.positive?
          group.each { |c| table.add_row(row(c)) }
        end
        (dims.size...headings.size).each { |i| table.align_column(i, :right) unless headings[i] == "verdict" }
        table.to_s
      end

      # The offered rate beside the achieved one when a configuration ran
      # in open loop.
      def open_loop?
        @open_loop ||= @report.configs.any?(&:offered_rps) ? :yes : :no
        @open_loop == :yes
      end

      # Latency columns only when something measured latency (a
      # micro-benchmark does not).
      def latency?
        @latency ||= @report.configs.any?(&:latency_us) ? :yes : :no
        @latency == :yes
      end

      # A received-bytes column when responses are large (64 KB or more on
      # average, as the download app's): then MB/s is the figure, not req/s.
      def bytes?
        @bytes ||= @report.configs.any? { |c| large_responses?(c) } ? :yes : :no
        @bytes == :yes
      end

      def large_responses?(config)
        config.bytes_per_s && config.rps_median && config.bytes_per_s >= 65_536 * config.rps_median
      end

      def mb_per_s(config)
        config.bytes_per_s ? format("%.1f", config.bytes_per_s / 1e6) : "-"
      end

      def title
        e = @report.experiment
        ok = @report.trials.count(&:ok?)
        "#{e[:name]}: #{@report.configs.size} configurations, #{ok} ok trials of #{@report.trials.size}"
      end

      # Groups by the first varying dimension when more than one varies.
      def groups(configs)
        sorted = @sort == :rps ? configs.sort_by { |c| -(c.rps_median || -1) } : configs
        return [sorted] if dims.size < 2 || @sort == :rps

        sorted.group_by { |c| c.dims[dims.first] }.values
      end

      def row(c)
        s = c.summary
        [*dims.map { |d| Report.format_dim(c.dims[d]) }, batches_text(c), number(s.median),
         *(number(c.offered_rps) if open_loop?), ci_text(c.rps_ci, s.median),
         s.cv ? format("%.1f%%", s.cv * 100) : "-", ratio_text(c), ratio_ci_text(c), verdict_text(c),
         *(%w[p50 p99 p99_9].map { |p| latency(c, p) } if latency?), *(mb_per_s(c) if bytes?),
         mb(c.pss_peak_bytes || c.rss_peak_bytes),
         c.flags.empty? ? "" : c.flags.map { |f| FLAG_MARKS.fetch(f["kind"], "?") }.uniq.join]
      end

      FLAG_MARKS = { "failed" => "F", "too_few_batches" => "n", "outlier" => "o", "high_variance" => "v",
                     "warmup_too_short" => "w", "engine_saturated" => "s", "warmup_errors" => "e",
                     "unsent_requests" => "u", "busy_machine" => "b" }.freeze
      private_constant :FLAG_MARKS

      def batches_text(c)
        c.failed.positive? ? "#{c.batches} (+#{c.failed} failed)" : c.batches.to_s
      end

      # The interval as ± half-width in percent of the median: easier to
      # scan down a column than two numbers.
      def ci_text(ci, median)
        return "-" unless ci && median&.positive?

        half = (ci[1] - ci[0]) / 2.0 / median
        format("±%.1f%%", half * 100)
      end

      def ratio_text(c)
        return (c.batches.positive? ? "1.000" : "-") if c.baseline?

        c.comparison&.ratio ? format("%.3f", c.comparison.ratio) : "-"
      end

      def ratio_ci_text(c)
        ci = c.comparison&.ratio_ci
        ci ? format("%.3f–%.3f", *ci) : "-"
      end

      def verdict_text(c)
        text = c.verdict
        text += " (#{c.comparison.batches_needed} batches for #{pct(@report.options.detect)})" if c.comparison&.batches_needed
        code = VERDICT_COLORS[c.verdict]
        @color && code ? "\e[#{code}m#{text}\e[0m" : text
      end

      def baseline_line
        base = @report.configs.find(&:baseline?)
        spec = @report.options.baseline
        what = spec ? "the configuration with #{spec} and the same other dimensions" : base&.id
        what += " (the first with #{@report.options.min_batches} ok batches)" if !spec && base && !base.equal?(@report.configs.first)
        "Ratios compare median #{@report.rate_unit} with #{what}; verdicts use the #{pct(@report.options.confidence, 0)} bootstrap " \
          "interval and a ±#{pct(@report.options.equivalence)} equivalence band."
      end

      def bar_chart(configs)
        max = configs.map { |c| c.rps_ci&.last || c.rps_median || 0 }.max.to_f
        return nil unless max.positive?

        labels = configs.map(&:label)
        width = [labels.map(&:size).max, 40].min
        lines = configs.zip(labels).map do |c, label|
          median = c.rps_median
          bar = median ? bar(median / max * BAR_WIDTH) : ""
          text = median ? number(median) : "no ok batch"
          format("%-*s %-*s %s", width, label[0, width], BAR_WIDTH, bar, text)
        end
        ["Median #{@report.rate_unit}:", *lines].join("\n")
      end

      def bar(cells)
        whole = cells.floor
        "█" * whole + BLOCKS[((cells - whole) * 8).floor.clamp(0, 7)]
      end

      def flag_lines(configs)
        lines = configs.flat_map { |c| c.flags.map { |f| "  #{c.label}: #{f["message"]}" } }
        return nil if lines.empty?

        legend = FLAG_MARKS.map { |kind, mark| "#{mark} #{kind.tr("_", " ")}" }.join(", ")
        ["Flags (#{legend}):", *lines].join("\n")
      end

      def warning_lines
        warnings = @report.warnings
        return nil if warnings.empty?

        ["Machine warnings (the figures below are less trustworthy):",
         *warnings.map { |w| w["at"] == "experiment" ? "  #{w["message"]}" : "  #{w["at"]}: #{w["message"]}" }].join("\n")
      end

      # What every configuration's servers really ran, as checked in each
      # of their processes before measuring.
      def ran_lines(configs)
        lines = configs.flat_map do |c|
          ran = c.ran
          next ["  #{c.label}: not recorded (stored before rackbench checked identities)"] if ran.empty?

          ran.map do |r|
            batches = ran.size > 1 ? " (batches #{r["batches"].join(", ")})" : ""
            "  #{c.label}: #{ran_text(r)}#{batches}"
          end
        end
        ["What ran (reported by every server process before measuring):", *lines].join("\n")
      end

      def ran_text(ran)
        ruby = ran["description"].to_s.split(" (").first
        jit = ran["jit"] ? "#{ran["jit"].upcase} on" : "no JIT"
        gem = ran["server_gem"] ? "#{ran["server_gem"]["name"]} #{ran["server_gem"]["version"]}" : "server unknown"
        env = ran["env"].map { |k, v| v.nil? ? "#{k} unset" : "#{k}=#{v}" }.join(" ")
        "#{ruby}, #{jit}, #{gem}, #{ran["processes"]} process#{"es" unless ran["processes"] == 1}; #{env}"
      end

      def latency(c, key)
        value = c.latency_us&.fetch(key, nil)
        value ? LoadSummary.format_us(value) : "-"
      end

      def mb(bytes)
        bytes ? format("%.1f MB", bytes / 1e6) : "-"
      end

      def number(value)
        return "-" unless value

        value >= 100 ? format("%.0f", value) : format("%.1f", value)
      end

      def pct(fraction, digits = 1)
        text = format("%.#{digits}f", fraction * 100)
        "#{text.sub(/\.0+\z/, "")}%"
      end
    end
  end
end
