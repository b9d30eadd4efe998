# frozen_string_literal: true

module Rackbench
  class Report
    # One entry of a request list (one page of a mix) over the ok batches
    # of its configuration: the engine's per-entry results
    # (doc/output.md, "entries") summed, its throughput per batch with the
    # same median and bootstrap interval as the configuration's own, and
    # its latency from the batches' per-entry histograms merged exactly as
    # the configuration's are.
    #
    #   EntrySummary.of(config.ok_trials, options) # => [EntrySummary, ...] or nil
    class EntrySummary
      PERCENTILES = [50, 90, 99, 99.9].freeze # as ConfigSummary's

      # A part of one batch: the entry's object in that batch's result and
      # the batch's measured window (s).
      Part = Struct.new(:batch, :entry, :duration_s)

      attr_reader :index, :name, :first, :weight

      # One EntrySummary per entry of the request list, in file order, over
      # +trials+ (ok TrialEntry objects) whose results have "entries"; nil
      # when none has (a single URL, or a result stored before the engine
      # counted entries). Entries are matched by their index and name: the
      # list is the same in every batch of a configuration.
      # options :: the Report::Options (interval settings)
      def self.of(trials, options)
        parts = Hash.new { |h, k| h[k] = [] }
        with_entries = trials.select { |t| t.entries.is_a?(Array) }
        return nil if with_entries.empty?

        with_entries.each do |trial|
          trial.entries.each do |entry|
            next unless entry.is_a?(Hash)

            parts[[entry["index"].to_i, entry["name"]]] << Part.new(trial.batch, entry, trial.record.measure_s)
          end
        end
        # (The contract says these add up to the top-level requests; adding
        # them makes the shares sum to 1 even for a document that does not.)
        total = parts.values.flatten.sum { |part| part.entry["requests"].to_i }
        parts.sort_by { |(index, _), _| index }.map do |(index, name), list|
          new(index: index, name: name, parts: list, total_requests: total, options: options)
        end
      end

      # :index, :name :: the entry's place in the list and its name (nil when unnamed)
      # :parts :: its Part of each batch
      # :total_requests :: the responses of every entry in those batches
      # :options :: the Report::Options
      def initialize(index:, name:, parts:, total_requests:, options:)
        @index = index
        @name = name
        @parts = parts
        @total_requests = total_requests
        @options = options
        last = parts.last.entry
        @first = last["first"] ? true : false
        @weight = last["weight"]
      end

      # The entry's name, or "#INDEX" for an unnamed entry.
      def label
        @name.nil? || @name.to_s.empty? ? "##{@index}" : @name.to_s
      end

      def batches = @parts.size
      def batch_numbers = @parts.map(&:batch)

      # Responses in the measured windows, all batches together.
      def requests = sum("requests")

      # Requests following a redirect (hops), all batches together.
      def hops = sum("hops")

      # The entry's share of the mix: its responses over every entry's.
      def share
        @total_requests.to_i.positive? ? requests.fdiv(@total_requests) : nil
      end

      # Responses per second of each batch's window: the entry's responses
      # over the window's duration_s.
      def rps_values
        @parts.filter_map do |part|
          duration = part.duration_s
          part.entry["requests"].to_i / duration.to_f if duration.is_a?(Numeric) && duration.positive?
        end
      end

      # Median and bootstrap interval of rps_values, as ConfigSummary
      # computes the configuration's: no interval below min_batches.
      def rps_median
        Stats.summary(rps_values).median
      end

      def rps_ci
        values = rps_values
        return nil if values.size < @options.min_batches

        Stats.bootstrap_ci(values, statistic: :median, confidence: @options.confidence,
                                   resamples: @options.resamples, seed: @options.seed)
      end

      # Responses by status code, summed ("200" => n).
      def status = add_counts(@parts.map { |p| p.entry["status"] })

      # Transport errors by kind, summed; kinds this rackbench does not
      # know are kept as they come.
      def errors = add_counts(@parts.map { |p| p.entry["errors"] })

      # Failed requests: transport errors plus responses whose status is
      # not 2xx or 3xx (LoadResult::Counts, as for the configuration).
      def failed
        errors.values.sum + bad_statuses(status)
      end

      # Every request started: responses plus transport errors.
      def attempts
        requests + errors.values.sum
      end

      # failed over attempts; nil without any attempt.
      def error_rate
        attempts.zero? ? nil : failed.fdiv(attempts)
      end

      # The warmup's requests, failures, statuses and errors (non-zero
      # kinds), summed over the batches: a login failing in the warmup
      # shows on its own entry.
      def warmup
        phases = @parts.map { |p| p.entry["warmup"] }.select { |w| w.is_a?(Hash) }
        return nil if phases.empty?

        status = add_counts(phases.map { |w| w["status"] })
        errors = add_counts(phases.map { |w| w["errors"] }).select { |_, n| n.positive? }
        { "requests" => phases.sum { |w| w["requests"].to_i }, "failed" => errors.values.sum + bad_statuses(status),
          "status" => status, "errors" => errors }
      end

      # The merged histogram of the batches (Stats::LatencyHistogram), or
      # nil when none has one.
      def histogram
        return @histogram if defined?(@histogram)

        histograms = @parts.map { |p| p.entry["histogram"] }.select { |h| h.is_a?(Hash) }
        @histogram = histograms.empty? ? nil : Stats::LatencyHistogram.merge(histograms)
      end

      # {"p50", "p90", "p99", "p99_9", "max", "mean"} in µs, as the
      # configuration's latency_us; nil without a histogram.
      def latency_us
        histogram&.percentiles_us(PERCENTILES)&.transform_keys { |k| k.tr(".", "_") }
      end

      # The entry of the report document (doc/output.md, configs.entries).
      def to_h
        @to_h ||= {
          "index" => @index, "name" => @name, "label" => label, "first" => @first, "weight" => @weight,
          "batches" => batches, "requests" => requests, "share" => share, "rps_median" => rps_median,
          "rps_ci95" => rps_ci, "rps_per_batch" => rps_values, "status" => status, "errors" => errors,
          "failed" => failed, "error_rate" => error_rate, "hops" => hops, "latency_us" => latency_us,
          "warmup" => warmup
        }
      end

      private

      def sum(key)
        @parts.sum { |p| p.entry[key].to_i }
      end

      # Count Hashes added key by key (nil and non-Hash parts ignored),
      # keys sorted so every view lists them in the same order.
      def add_counts(hashes)
        total = Hash.new(0)
        hashes.each do |h|
          next unless h.is_a?(Hash)

          h.each { |key, n| total[key.to_s] += n.to_i }
        end
        total.sort.to_h
      end

      def bad_statuses(status)
        status.sum { |code, n| code.to_i.between?(200, 399) ? 0 : n }
      end
    end
  end
end
