# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # The HTML tables of the page: every configuration with its statistics,
    # and the failed trials with their reasons. Every value goes through
    # Escape.html.
    class Tables
      def initialize(doc)
        @doc = doc
      end

      # One row per configuration: its varying dimensions, then throughput,
      # comparison, latency, errors and memory, then its flags.
      def configs
        dims = @doc.dimensions
        headings = [*dims, "batches", "median #{@doc.rate_unit}", *("offered/s" if open_loop?), "95% CI", "ratio",
                    "ratio 95% CI", "verdict",
                    "batches needed", "p50", "p99", "p99.9", "received/s", "errors", "RSS peak", "PSS peak", "#{@doc.rate_unit} per GB", "flags"]
        rows = @doc.configs.map { |c| config_cells(c, dims) }
        table(headings, rows, text_columns: [*dims, "verdict", "flags"])
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
            [esc(@doc.name(c)), esc(r["description"]), esc(r["jit"] ? r["jit"].upcase : "none"), esc(gem),
             esc(r["processes"]), esc(env), esc(Array(r["batches"]).join(", "))]
          end
        end
        table(%w[configuration ruby JIT server processes variables batches], rows,
              text_columns: %w[configuration ruby JIT server variables batches])
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
        table(["#", "batch", "configuration", "reason"], rows, text_columns: %w[configuration reason])
      end

      private

      def config_cells(config, dims)
        lat = config["latency_us"] || {}
        [
          *dims.map { |d| esc((config["dims"] || {})[d]) },
          esc(batches_text(config)),
          esc(Numbers.rps(config["rps_median"])),
          *(esc(Numbers.rps(config["offered_rps"])) if open_loop?),
          esc(Numbers.interval(config["rps_ci95"], :rps)),
          esc(Numbers.ratio(config["ratio"])),
          esc(Numbers.interval(config["ratio_ci95"], :ratio)),
          verdict_cell(config),
          esc(Numbers.integer(config["batches_needed"])),
          *%w[p50 p99 p99_9].map { |p| esc(Numbers.latency_us(lat[p])) },
          esc(Numbers.megabytes(config["bytes_per_s"])),
          esc(Numbers.percent(config["error_rate"])),
          esc(Numbers.megabytes(config["rss_peak_bytes"])),
          esc(Numbers.megabytes(config["pss_peak_bytes"])),
          esc(Numbers.rps_whole(config["rps_per_gb"])),
          flags_cell(config["flags"])
        ]
      end

      # Open loop: the offered rate beside the achieved one.
      def open_loop?
        @doc.configs.any? { |c| c["offered_rps"] }
      end

      def batches_text(config)
        failed = config["failed"].to_i
        failed.positive? ? "#{config["batches"].to_i} + #{failed} failed" : config["batches"].to_i.to_s
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

      # A table of numbers (right-aligned) but for the +text_columns+
      # (headings). Cells are HTML that the caller escaped.
      def table(headings, rows, text_columns:)
        classes = headings.map { |h| text_columns.include?(h) ? "" : ' class="num"' }
        head = headings.each_with_index.map { |h, i| "<th#{classes[i]}>#{esc(h)}</th>" }
        body = rows.map do |cells|
          "<tr>#{cells.each_with_index.map { |cell, i| "<td#{classes[i]}>#{cell}</td>" }.join}</tr>"
        end
        %(<div class="scroll"><table><thead><tr>#{head.join}</tr></thead>) +
          %(<tbody>\n#{body.join("\n")}\n</tbody></table></div>)
      end

      def esc(value)
        Escape.html(value)
      end
    end
  end
end
