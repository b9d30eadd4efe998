# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # The HTML tables of the page: every configuration with its statistics,
    # and the failed trials with their reasons. Every value goes through
    # Escape.html.
    class Tables
      # doc :: the HtmlReport::Document
      # :columns :: the table of columns of the configurations table
      #             (default: Report::Columns::ALL)
      # A table whose columns are numbers (right-aligned) where +numbers+
      # (one true or false per heading) says so. Cells are HTML that the
      # caller escaped; headings are escaped here. Every table of the page
      # is built so (the inside section's too).
      def self.table(headings, rows, numbers:)
        classes = numbers.map { |number| number ? ' class="num"' : "" }
        head = headings.each_with_index.map { |h, i| "<th#{classes[i]}>#{Escape.html(h)}</th>" }
        body = rows.map do |cells|
          "<tr>#{cells.each_with_index.map { |cell, i| "<td#{classes[i]}>#{cell}</td>" }.join}</tr>"
        end
        %(<div class="scroll"><table><thead><tr>#{head.join}</tr></thead>) +
          %(<tbody>\n#{body.join("\n")}\n</tbody></table></div>)
      end

      def initialize(doc, columns: Report::Columns::ALL)
        @doc = doc
        @columns = columns
      end

      # One row per configuration: Report::Columns' HTML cells (its varying
      # dimensions, then throughput, comparison, latency, errors and
      # memory, then its flags).
      def configs
        layout = Report::ColumnLayout.new(@doc.configs, dimensions: @doc.dimensions, rate_unit: @doc.rate_unit,
                                          columns: @columns)
        cells = layout.cells(:html)
        rows = @doc.configs.map { |c| cells.map { |cell| config_cell(cell, c) } }
        table(cells.map(&:heading), rows, numbers: cells.map { |cell| cell.align == :right })
      end

      # One row per configuration and distinct identity its servers
      # reported: ruby, JIT, server gem, processes, checked variables.
      def what_ran
        rows = @doc.configs.flat_map do |c|
          ran = Array(c["ran"])
          next [[esc(@doc.name(c)), %(<span class="note">not recorded</span>), "", "", "", "", ""]] if ran.empty?

          ran.map do |r|
            env = (r["env"] || {}).map { |k, v| v.nil? ? "#{k} unset" : "#{k}=#{v}" }.join(" ")
            gem = r["server_gem"] ? "#{r["server_gem"]["name"]} #{r["server_gem"]["version"]}" : ""
            ruby = r["recipe"] ? "#{r["description"]} (#{Rubies::Build::Recipe.text(r["recipe"])})" : r["description"]
            [esc(@doc.name(c)), esc(ruby), esc(r["jit"] ? r["jit"].upcase : "none"), esc(gem),
             esc(r["processes"]), esc(env), esc(Array(r["batches"]).join(", "))]
          end
        end
        table(%w[configuration ruby JIT server processes variables batches], rows,
              numbers: [false, false, false, false, true, false, false])
      end

      # One row per group of gems whose versions differ between
      # configurations (the document's "gem_differences"): the app, the
      # gems, each version with the configurations that loaded it, and
      # whether a dimension that chooses gems explains it. Empty string
      # when nothing differs.
      def gem_differences
        entries = Array(@doc.raw["gem_differences"])
        return "" if entries.empty?

        rows = entries.map do |entry|
          versions = Array(entry["versions"]).map { |v| "#{v["version"]} (#{v["label"]})" }.join(" vs ")
          explained = if entry["explained"]
                        esc("yes: #{Array(entry["told_apart_by"]).join(", ")}")
                      else
                        %(<span class="reason">no: flagged (gems differ)</span>)
                      end
          [esc(entry["app"]), esc(Array(entry["gems"]).join(", ")), esc(versions), explained]
        end
        table(["app", "gems", "versions", "a dimension chooses them"], rows, numbers: [false] * 4)
      end

      # One row per gem of an app built or bundled otherwise by some
      # configurations at the same version (the document's "gem_notes"):
      # the app, what kind of note, and its text. Empty string when none.
      def gem_notes
        notes = Array(@doc.raw["gem_notes"])
        return "" if notes.empty?

        kinds = { "platform" => "built otherwise", "only_some" => "in some bundles only" }
        rows = notes.map { |note| [esc(note["app"]), esc(kinds.fetch(note["kind"], note["kind"])), esc(note["text"])] }
        table(%w[app note gem], rows, numbers: [false] * 3)
      end

      ENTRY_HEADINGS = ["page", "weight", "share", "requests", "req/s", "95% CI", "p50", "p90", "p99", "p99.9",
                        "max", "statuses", "errors", "failed", "hops", "warmup failed"].freeze
      ENTRY_NUMBERS = [false, true, true, true, true, true, true, true, true, true, true, false, false, true, true,
                       false].freeze

      # The per-page table of +config+ (a configuration entry with
      # "entries"): one row per entry of its request list, in file order,
      # with every figure of configs.entries.
      def entries(config)
        rows = Array(config["entries"]).map { |entry| entry_row(entry) }
        table(ENTRY_HEADINGS, rows, numbers: ENTRY_NUMBERS)
      end

      # The table of one sweep (the document's "concurrency_sweep"): one
      # row per number of connections, as the terminal shows it
      # (Report::ConcurrencySweepTerminal).
      def sweep(sweep)
        rows = Array(sweep["points"]).map do |point|
          latencies = Report::ConcurrencySweep::PERCENTILES.map do |p|
            value = point.dig("latency_us", "p#{p}")
            range = point.dig("latency_us_batch_range", "p#{p}")
            text = Units.latency_us(value)
            range ? "#{esc(text)} <span class=\"note\">#{esc(Units.latency_us(range[0]))}–#{esc(Units.latency_us(range[1]))}</span>" : esc(text)
          end
          [esc(point["connections"]), esc(point["rps_median"] ? Units.rate_rounded(point["rps_median"]) : Units::NONE),
           esc(Units.interval(point["rps_ci95"], :rate_rounded, separator: "–")), *latencies, esc(point["batches"])]
        end
        table(["connections", "median #{@doc.rate_unit}", "95% CI", "p50", "p95", "p99", "batches"], rows,
              numbers: [true] * 7)
      end

      # One row per failed trial: position, batch, configuration, reason.
      # Empty string when no trial failed.
      def failed_trials
        failed = @doc.failed_trials
        return "" if failed.empty?

        rows = failed.map do |t|
          [esc(t["position"]), esc(t["batch"]), esc(@doc.name_for_id(t["config_id"])),
           %(<span class="reason">#{esc(t["reason"] || "(no reason recorded)")}</span>)]
        end
        table(["#", "batch", "configuration", "reason"], rows, numbers: [true, true, false, false])
      end

      private

      # A configuration's cell: its text escaped, or the verdict's badge or
      # the flags' list.
      def config_cell(cell, config)
        case cell.markup
        when :verdict then verdict_cell(config)
        when :flags then flags_cell(config["flags"])
        else esc(cell.write(config))
        end
      end

      def verdict_cell(config)
        verdict = @doc.verdict(config)
        color = Charts::VERDICT_COLORS.fetch(verdict)
        explanation = config["verdict_explanation"]
        note = explanation ? %(<br><span class="note">#{esc(explanation)}</span>) : ""
        %(<span class="verdict" style="border-color:#{color}">#{esc(verdict)}</span>#{note})
      end

      def flags_cell(flags)
        items = Array(flags).filter_map { |f| f.is_a?(Hash) ? "<li>#{esc(f["message"] || f["kind"])}</li>" : nil }
        items.empty? ? "" : %(<ul class="flags">#{items.join}</ul>)
      end

      def entry_row(entry)
        latency = entry["latency_us"] || {}
        errors = (entry["errors"] || {}).select { |_, n| n.to_i.positive? }
        cells = [Report::EntryText.name(entry), Units.integer(entry["weight"]),
                 Units.percent(entry["share"], digits: 1), Units.integer(entry["requests"]), Units.rate(entry["rps_median"]),
                 Units.interval(entry["rps_ci95"], :rate),
                 *%w[p50 p90 p99 p99_9 max].map { |k| Units.latency_us(latency[k]) },
                 (entry["status"] || {}).map { |code, n| "#{code}: #{n}" }.join(", "),
                 errors.map { |kind, n| "#{kind}: #{n}" }.join(", "),
                 "#{Units.integer(entry["failed"])} (#{Units.percent(entry["error_rate"])})",
                 Units.integer(entry["hops"]), Report::EntryText.warmup_failures(entry)]
        cells.map { |cell| esc(cell) }
      end

      def table(headings, rows, numbers:)
        self.class.table(headings, rows, numbers: numbers)
      end

      def esc(value)
        Escape.html(value)
      end
    end
  end
end
