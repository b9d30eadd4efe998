# frozen_string_literal: true

module Rackbench
  module Tune
    # The answer of a tuning, as a document ("rackbench-tune" format 1,
    # doc/output.md) that the terminal, --json and tune.html read: per
    # server, the memory model, every candidate (predicted memory, whether
    # it fit, its score and the memory it really used), the knee at each
    # process count; then the best configuration overall with its
    # interval, and the memory-matched comparisons across servers.
    #
    # A candidate counts for "best" only when its score held the target
    # and the PSS its tree really reached (the sampler's peak over its
    # batches) stayed within the budget: a prediction is checked, never
    # trusted.
    class Analysis
      FORMAT = "rackbench-tune"
      FORMAT_VERSION = 1

      # parts :: Search::ServerParts (run or recalled)
      # :settings :: Tune::Settings
      # :scorer :: a Scorer (default: Scorer::WithinLatency at the settings' target)
      # :experiment :: the Experiment (its name and source for the document)
      def initialize(parts, settings:, experiment:, scorer: nil)
        @parts = parts
        @settings = settings
        @experiment = experiment
        @scorer = scorer || Scorer::WithinLatency.new(percentile: settings.percentile, target_us: settings.target_us,
                                                      seed: experiment.seed)
      end

      def to_h
        @to_h ||= begin
          servers = @parts.map { |part| server_h(part) }
          best = servers.filter_map { |s| s["best"] }.max_by { |c| [c["score"]["median"], -c["measured_pss_bytes"].to_i] }
          {
            "format" => FORMAT, "format_version" => FORMAT_VERSION,
            "experiment" => { "name" => @experiment.name, "source" => @experiment.source, "seed" => @experiment.seed },
            "budget" => { "memory_bytes" => @settings.memory_bytes, "percentile" => @settings.percentile,
                          "latency_us" => @settings.target_us },
            "score" => @scorer.description,
            "servers" => servers, "best" => best, "comparisons" => comparisons(servers)
          }
        end
      end

      private

      def server_h(part)
        candidates = part.candidates.map { |c| candidate_h(c) }
        scored = candidates.select { |c| c["status"] == "scored" }
        eligible = scored.select { |c| c["score"]["qualified"] && !c["over_budget"] }
        best = eligible.max_by { |c| [c["score"]["median"], -c["processes"] * c["threads"]] }
        {
          "server" => part.server.label, "model" => part.model&.to_h, "candidates" => candidates,
          "excluded" => candidates.select { |c| c["status"] == "excluded" }.map { |c| c.slice("processes", "threads", "predicted_pss_bytes") },
          "best" => best, "knees" => knees(part)
        }
      end

      def candidate_h(candidate)
        entry = { "server" => candidate.server, "processes" => candidate.processes, "threads" => candidate.threads,
                  "connections" => candidate.connections, "predicted_pss_bytes" => candidate.predicted_bytes,
                  "fits" => candidate.fits }
        return entry.merge("status" => "unsupported", "reason" => candidate.unsupported) if candidate.unsupported

        records = candidate.records
        return entry.merge("status" => candidate.fits == false ? "excluded" : "not run") if records.nil?

        score = @scorer.score(records)
        return entry.merge("status" => "failed", "reason" => records.map(&:reason).compact.first) unless score

        measured = records.select(&:ok?).filter_map(&:pss_peak_bytes).max
        rps = Stats.summary(records.select(&:ok?).map { |r| r.rate.to_f }).median
        entry.merge("status" => "scored", "score" => score.to_h, "rps_median" => rps,
                    "measured_pss_bytes" => measured,
                    "over_budget" => measured ? measured > @settings.memory_bytes : false)
      end

      # The knee at every process count that ran (Knee).
      def knees(part)
        scores = part.candidates.select { |c| c.records && !c.unsupported }
                     .map { |c| [c.processes, c.threads, @scorer.score(c.records)] }
        scores.group_by(&:first).sort.filter_map do |processes, list|
          left_out = part.candidates.select { |c| c.processes == processes && c.fits == false && !c.unsupported }.map(&:threads)
          Knee.of(processes, list.map { |_, threads, score| [threads, score] }, tolerance: @settings.knee_tolerance,
                                                                                 left_out: left_out)
        end
      end

      # Memory-matched comparisons: each server's best within the budget,
      # against every other server's (seed 002's pairing of a forking and a
      # threaded server at equal memory); one line per pair, or one line
      # naming the best with a single server.
      def comparisons(servers)
        bests = servers.filter_map { |s| s["best"] }
        budget = Units.megabytes(@settings.memory_bytes)
        return [] if bests.empty?
        return [{ "text" => "#{name(bests.first)} is the best of #{bests.first["server"]} within #{budget}", "entries" => bests }] if bests.size == 1

        bests.combination(2).map do |a, b|
          a, b = b, a if b["score"]["median"] > a["score"]["median"]
          ratio = b["score"]["median"].positive? ? a["score"]["median"] / b["score"]["median"] : nil
          { "text" => "#{name(a)} (#{rate(a)}, #{Units.megabytes(a["measured_pss_bytes"])}) vs #{name(b)} " \
                      "(#{rate(b)}, #{Units.megabytes(b["measured_pss_bytes"])}) within #{budget}: " \
                      "#{ratio ? format("%.2f× the throughput", ratio) : "only the first holds the target"}",
            "ratio" => ratio, "entries" => [a, b] }
        end
      end

      def name(candidate)
        "#{candidate["server"]} #{candidate["processes"]}×#{candidate["threads"]}"
      end

      def rate(candidate)
        "#{Units.rate_rounded(candidate["score"]["median"])} req/s"
      end
    end
  end
end
