# frozen_string_literal: true

require_relative "entries_terminal"
require_relative "inside_terminal"
require_relative "instructions_terminal"
require_relative "diffs_terminal"
require_relative "cycles_terminal"
require_relative "concurrency_sweep_terminal"

module Rackbench
  class Report
    # The report for a terminal: one table of configurations grouped by the
    # first varying dimension (a rule between groups), a verdict column,
    # then a bar chart of median throughput with its interval, and the
    # flags. Plain text unless color is asked for (a TTY). Within a width
    # (Text::Width): its tables fitted (Text::Table), its long lines
    # wrapped, its bars shorter.
    class Terminal
      BAR_WIDTH = 40
      # Shorter bars than this no longer show a difference of a few percent.
      BAR_MIN_WIDTH = 10
      # Eighths of a block, for bars finer than one character.
      BLOCKS = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"].freeze
      VERDICT_COLORS = { "faster" => 32, "slower" => 31, "no difference detected" => 33 }.freeze

      # report :: the Report
      # :color :: colour the verdicts with ANSI escapes (default: false)
      # :sort :: :order (the experiment's, grouped by the first varying
      #          dimension) or :rps (fastest first) (default: :order)
      # :columns :: the table of columns (default: Report::Columns::ALL)
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit, every cell whole)
      def initialize(report, color: false, sort: :order, columns: Columns::ALL, width: nil)
        @report = report
        @color = color
        @sort = sort
        @columns = columns
        @width = width
      end

      # The whole report as text: machine warnings, the table, the
      # baseline, the bar chart, the pages of a request list, the flags and
      # what ran; lines longer than the width wrapped.
      def render
        Text::Wrap.prose(sections, @width)
      end

      private

      def sections
        configs = @report.configs
        if configs.empty?
          return "#{@report.experiment[:name]}: no trials stored\n" if @report.profiles.empty?

          # A profile-only run (`rackbench profile`) measured nothing.
          return "#{@report.experiment[:name]}: profiled trials only, no measurement\n#{profile_lines}\n"
        end

        # Only instructions measured: no time figure to show, the
        # instructions table is the report's.
        unless configs.any?(&:time?)
          return [warning_lines, labels_line, title, instructions(configs), cycles(configs), service_lines(configs),
                  @report.history.summary_line, detect_lines,
                  host_lines, flag_lines(configs), ran_lines(configs), gem_note_lines, gem_lines, profile_lines,
                  diffs(configs)].compact.join("\n") + "\n"
        end

        [warning_lines, labels_line, table(configs), baseline_line, @report.history.summary_line, bar_chart(configs), sweep,
         pages(configs), inside(configs), instructions(configs), cycles(configs), service_lines(configs), detect_lines,
         host_lines,
         flag_lines(configs),
         ran_lines(configs), gem_note_lines, gem_lines, profile_lines, diffs(configs)].compact.join("\n") + "\n"
      end

      def dims = @report.dimensions

      # One line per host when the trials ran on several (a fleet), or nil.
      def host_lines
        hosts = @report.hosts
        return nil if hosts.empty?

        lines = hosts.map do |h|
          c = h.comparison
          vs = if c&.ratio_ci then format("%.3fx the others (95%% CI %.3f-%.3f)", c.ratio, *c.ratio_ci)
               elsif c&.ratio then format("%.3fx the others (%s)", c.ratio, c.verdict)
               end
          "  #{h.name}: batches #{h.batches.join(",")}, #{h.ok} ok#{", #{h.failed} failed" if h.failed.positive?}" \
            "#{", #{vs}" if vs}#{"  STANDS APART from its testbed" if h.apart}"
        end
        "\nHosts (each batch ran whole on one host; index = the batch's rates over each configuration's median):\n" \
          "#{lines.join("\n")}"
      end

      # What a --detect run achieved (Detect::Outcome#lines), or nil.
      def detect_lines
        @report.detect && "\n#{@report.detect.lines.join("\n")}"
      end

      # The profiled trials' top frames (Profile::Terminal), or nil.
      def profile_lines
        return nil if @report.profiles.empty?

        "\n#{Profile::Terminal.render(@report.profiles.to_a).chomp}"
      end

      # The configurations table: Report::Columns' terminal cells.
      def table(configs)
        layout = ColumnLayout.new(configs.map { |c| c.to_h(@columns) }, dimensions: dims,
                                  rate_unit: @report.rate_unit, detect: @report.options.detect, columns: @columns)
        cells = layout.cells(:terminal)
        rows = groups(configs).each_with_index.flat_map do |group, i|
          [*(:separator if i.positive?), *group.map { |c| cells.map { |cell| text(cell, c.to_h(@columns)) } }]
        end
        # The dimensions lead the table: each continued table repeats them.
        Text::Table.new(title: title, headings: cells.map(&:heading), rows: rows, width: @width, keys: dims.size,
                        right: cells.each_index.select { |i| cells[i].align == :right }).to_s
      end

      # A cell's text, the verdict coloured when asked for.
      def text(cell, entry)
        text = cell.write(entry)
        code = VERDICT_COLORS[entry["verdict"]] if cell.markup == :verdict
        @color && code ? "\e[#{code}m#{text}\e[0m" : text
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

      def baseline_line
        base = @report.configs.find(&:baseline?)
        spec = @report.options.baseline
        what = spec ? "the configuration with #{spec} and the same other dimensions" : base&.id
        what += " (the first with #{@report.options.min_batches} ok batches)" if !spec && base && !base.equal?(@report.configs.first)
        "Ratios compare median #{@report.rate_unit} with #{what}; verdicts use the " \
          "#{Units.percent_trimmed(@report.options.confidence, digits: 0)} bootstrap interval and a " \
          "±#{Units.percent_trimmed(@report.options.equivalence)} equivalence band."
      end

      def bar_chart(configs)
        max = configs.map { |c| c.rps_ci&.last || c.rps_median || 0 }.max.to_f
        return nil unless max.positive?

        labels = configs.map(&:label)
        width = [labels.map(&:size).max, 40].min
        bar_width = bar_width(width)
        lines = configs.zip(labels).map do |c, label|
          median = c.rps_median
          bar = median ? bar(median / max * bar_width) : ""
          text = median ? Units.rate_rounded(median) : "no ok batch"
          format("%-*s %-*s %s", width, Text::Wrap.middle(label, width).first, bar_width, bar, text)
        end
        ["Median #{@report.rate_unit}:", *lines].join("\n")
      end

      # The bars' width within the output's: the label, a space, the bar, a
      # space and the figure ("no ok batch" at most).
      def bar_width(label_width)
        return BAR_WIDTH unless @width

        (@width - label_width - 2 - "no ok batch".size).clamp(BAR_MIN_WIDTH, BAR_WIDTH)
      end

      def bar(cells)
        whole = cells.floor
        "█" * whole + BLOCKS[((cells - whole) * 8).floor.clamp(0, 7)]
      end

      # Latency against connections (ConcurrencySweepTerminal); nil unless
      # load.connections is a dimension.
      def sweep
        ConcurrencySweepTerminal.new(@report.concurrency_sweep, rate_unit: @report.rate_unit, width: @width).render
      end

      # One table per configuration with a request list (EntriesTerminal);
      # nil without any, so a report of single URLs reads as before.
      def pages(configs)
        EntriesTerminal.new(configs.map { |c| [c.label, c.to_h["entries"]] }, width: @width).render
      end

      # The "Inside the server" section (InsideTerminal); nil when no
      # configuration has an inside figure.
      def inside(configs)
        InsideTerminal.new(configs.map { |c| [c.label, c.to_h(@columns)["inside"]] }, noise: @report.inside_noise,
                                                                                   labels: configs.to_h { |c| [c.id, c.label] },
                                                                                   width: @width).render
      end

      # The "Instructions per request" section (InstructionsTerminal); nil
      # when no configuration counted instructions.
      def instructions(configs)
        InstructionsTerminal.new(configs.map { |c| c.to_h(@columns) }, dimensions: dims,
                                                                     labels: configs.to_h { |c| [c.id, c.label] },
                                                                     width: @width).render
      end

      # "Estimated cycles per request" (CyclesTerminal); nil when no
      # configuration ran the cache simulation.
      def cycles(configs)
        CyclesTerminal.new(configs.map { |c| c.to_h(@columns) }, dimensions: dims, width: @width).render
      end

      # "Where the time went" (DiffsTerminal): each configuration against
      # its baseline, function by function; nil without a diff. Last: it
      # is the deepest look, and the longest.
      def diffs(configs)
        DiffsTerminal.new(@report.diffs.map(&:to_h), labels: configs.to_h { |c| [c.id, c.label] }, width: @width).render
      end

      def flag_lines(configs)
        lines = configs.flat_map { |c| c.flags.map { |f| "  #{c.label}: #{f["message"]}" } }
        return nil if lines.empty?

        # page_errors means nothing without a request list: its mark is
        # in the legend only when a configuration ran one.
        marks = configs.any?(&:entries) ? Flags::MARKS : Flags::MARKS.except("page_errors")
        # gems_differ: in the legend when a configuration has it.
        marks = marks.except("gems_differ") unless configs.any? { |c| c.flags.any? { |f| f["kind"] == "gems_differ" } }
        legend = marks.map { |kind, mark| "#{mark} #{kind.tr("_", " ")}" }.join(", ")
        ["Flags (#{legend}):", *lines].join("\n")
      end

      # What the run measured (--label and the revisions), or nil.
      def labels_line
        labels = @report.labels
        labels.empty? ? nil : "Labels: #{labels.text}"
      end

      def warning_lines
        warnings = @report.warnings
        return nil if warnings.empty?

        ["Machine warnings (the figures below are less trustworthy):",
         *warnings.map { |w| w["at"] == "experiment" ? "  #{w["message"]}" : "  #{w["at"]}: #{w["message"]}" }].join("\n")
      end

      # What each configuration's services cost over the windows
      # (ServiceFigures), or nil when no app had services.
      def service_lines(configs)
        lines = configs.flat_map do |c|
          Array(c.services).map { |entry| "  #{c.label}: #{ServiceFigures.text(entry)}" }
        end
        return nil if lines.empty?

        ["Services (CPU over each measured window, median over the ok batches; memory peak):", *lines].join("\n")
      end

      # What every configuration really ran, as each process of its trials
      # reported it (a server's before it was measured, a script's as it
      # ran).
      def ran_lines(configs)
        lines = configs.flat_map do |c|
          ran = c.ran
          next ["  #{c.label}: not recorded (stored before rackbench checked identities)"] if ran.empty?

          ran.map do |r|
            batches = ran.size > 1 ? " (batches #{r["batches"].join(", ")})" : ""
            "  #{c.label}: #{ConfigSummary::Ran.text(r)}#{batches}"
          end
        end
        ["What ran (as every process of each trial reported it):", *lines].join("\n")
      end

      # Beside what ran: the gems of an app built or bundled otherwise by
      # some configurations, at the same versions (Report#gem_notes); nil
      # when there are none. Notes, not flags: the same code ran.
      def gem_note_lines
        notes = @report.gem_notes
        return nil if notes.empty?

        ["Gems built or bundled otherwise (the same versions; notes, not flags):",
         *notes.map { |note| "  #{note["app"]}: #{note["text"]}" }].join("\n")
      end

      # Beside what ran: the gems whose versions differ between
      # configurations (Report#gem_differences), those no gem-choosing
      # dimension explains marked; nil when none differs.
      def gem_lines
        entries = @report.gem_differences
        return nil if entries.empty?

        lines = entries.map do |entry|
          mark = entry["explained"] ? "" : " [g: not a dimension of the experiment]"
          "  #{entry["app"]}: #{GemDifferences.line(entry)}#{mark}"
        end
        ["Gems that differ between configurations (as their servers loaded them):", *lines].join("\n")
      end
    end
  end
end
