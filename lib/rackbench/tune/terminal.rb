# frozen_string_literal: true

require "terminal-table"

module Rackbench
  module Tune
    # The tune document (Analysis#to_h) for a terminal: the budget and the
    # score, each server's memory model and candidates (predicted and
    # measured PSS, throughput, latency at the target's percentile, score
    # and its interval), what the budget left out, the knees, the best
    # configuration and the memory-matched comparisons.
    class Terminal
      HEADINGS = ["server", "processes × threads", "connections", "predicted PSS", "measured PSS", "req/s",
                  "%<p>s", "score", "95% CI", "status"].freeze

      # document :: the tune document (Tune#to_h)
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def initialize(document, width: nil)
        @doc = document
        @width = width
      end

      # "Best: puma 2 processes × 4 threads: 800 req/s (95% CI ...), measured
      # PSS 148.0 MB of 160.0 MB", or that none held the target.
      def self.best_line(document)
        best = document["best"]
        return "Best: no candidate held the target within the budget" unless best

        ci = best["score"]["ci95"]
        batches = best["score"]["per_batch"].size
        interval = if ci
                     "95% CI #{Units.interval(ci, :rate_rounded, separator: "–")}"
                   else
                     "#{batches} batch#{"es" unless batches == 1}: an interval needs #{Scorer::WithinLatency::MIN_BATCHES}"
                   end
        "Best: #{best["server"]} #{best["processes"]} process#{"es" unless best["processes"] == 1} × " \
          "#{best["threads"]} thread#{"s" unless best["threads"] == 1}: " \
          "#{Units.rate_rounded(best["score"]["median"])} req/s (#{interval}), measured PSS " \
          "#{Units.megabytes(best["measured_pss_bytes"])} of #{Units.megabytes(document["budget"]["memory_bytes"])}"
      end

      # A candidate's status in words: holds / misses the target (and over
      # budget), failed with its reason, or the document's status.
      def self.status(candidate)
        case candidate["status"]
        when "scored"
          next_status = candidate["score"]["qualified"] ? "holds" : "misses the target"
          candidate["over_budget"] ? "#{next_status}; over budget" : next_status
        when "failed" then "failed: #{candidate["reason"].to_s.lines.first&.strip}"
        else candidate["status"]
        end
      end

      def render
        budget = @doc["budget"]
        percentile = "p#{format("%g", budget["percentile"])}"
        lines = ["Tune #{@doc["experiment"]["name"]}: within #{Units.megabytes(budget["memory_bytes"])} PSS " \
                 "(whole server tree), #{percentile} ≤ #{Units.latency_us(budget["latency_us"])}",
                 "Score: #{@doc["score"]}."]
        @doc["servers"].each { |server| lines.concat(server_lines(server, percentile)) }
        lines.concat(best_lines)
        Text::Wrap.prose(lines.join("\n") + "\n", @width)
      end

      private

      def server_lines(server, percentile)
        lines = ["", model_line(server)]
        ran = server["candidates"].reject { |c| %w[excluded unsupported].include?(c["status"]) }
        lines << table(server["server"], ran, percentile) unless ran.empty?
        unsupported = server["candidates"].select { |c| c["status"] == "unsupported" }
        unless unsupported.empty?
          lines << "Cannot run: #{unsupported.map { |c| "#{c["processes"]}×#{c["threads"]}" }.join(", ")} (#{unsupported.first["reason"]})"
        end
        excluded = server["excluded"].map { |c| "#{c["processes"]}×#{c["threads"]} (#{Units.megabytes(c["predicted_pss_bytes"])})" }
        lines << "Left out, predicted over the budget: #{excluded.join(", ")}" unless excluded.empty?
        over = ran.select { |c| c["over_budget"] }.map { |c| "#{c["processes"]}×#{c["threads"]} (#{Units.megabytes(c["measured_pss_bytes"])})" }
        lines << "Measured over the budget (not eligible): #{over.join(", ")}" unless over.empty?
        knees = server["knees"]
        lines << "Where more threads stop helping (#{server["server"]}):" unless knees.empty?
        lines.concat(knees.map { |k| "  #{k["text"]}" })
        lines
      end

      def model_line(server)
        model = server["model"]
        return "#{server["server"]}: no pilot yet (the candidates follow from its measured PSS)" unless model

        workers = model["points"].map { |p| "#{p["threads"]} thread#{"s" unless p["threads"] == 1}: #{Units.megabytes(p["worker_pss_bytes"])}" }
        "#{server["server"]}: memory model from the pilot (PSS at the end of the window): master " \
          "#{Units.megabytes(model["master_pss_bytes"])}, a worker at #{workers.join(", ")}; " \
          "predicted PSS = master + processes × worker(threads)"
      end

      def table(label, candidates, percentile)
        rows = candidates.map do |c|
          score = c["score"]
          [label, "#{c["processes"]} × #{c["threads"]}", c["connections"], Units.megabytes(c["predicted_pss_bytes"]),
           Units.megabytes(c["measured_pss_bytes"]), c["rps_median"] ? Units.rate_rounded(c["rps_median"]) : Units::NONE,
           latency(score), score ? Units.rate_rounded(score["median"]) : Units::NONE,
           Units.interval(score&.fetch("ci95"), :rate_rounded, separator: "–"), Terminal.status(c)]
        end
        headings = HEADINGS.map { |h| h.sub("%<p>s", percentile) }
        Text::Table.new(headings: headings, rows: rows, right: (2..8).to_a, width: @width).to_s
      end

      def latency(score)
        values = Array(score&.fetch("per_batch")).map { |b| b["latency_us"] }.compact
        values.empty? ? Units::NONE : Units.latency_us(Stats.summary(values).median)
      end

      def best_lines
        lines = ["", Terminal.best_line(@doc)]
        comparisons = @doc["comparisons"]
        lines << "Memory-matched:" unless comparisons.empty?
        lines.concat(comparisons.map { |c| "  #{c["text"]}" })
        lines
      end
    end
  end
end
