# frozen_string_literal: true

module Rackbench
  class Report
    # A proxied configuration's figures over its ok batches, from each
    # trial's proxy document (Trial::Record#proxy): the cache's hit ratio,
    # the proxy's own CPU and memory, and what the measured rate makes in
    # a day. Pure functions of the records.
    module ProxyFigures
      SECONDS_PER_DAY = 86_400

      module_function

      # Cache hits over lookups, pooled over the batches (each batch counts
      # by its requests); nil without a cache or a lookup.
      def hit_ratio(records)
        counts = records.filter_map { |r| r.proxy&.fetch("cache", nil) }
        return nil if counts.empty?

        Proxy::CacheCounts.hit_ratio("hits" => counts.sum { |c| c["hits"].to_i },
                                     "misses" => counts.sum { |c| c["misses"].to_i })
      end

      # The proxy's CPU (user + system) per second of the window, in cores
      # (0.5: half of one CPU), the median over the batches; nil unproxied.
      def cpu_cores(records)
        median(records.filter_map do |r|
          sample = r.proxy&.fetch("sample", nil)
          next unless sample && sample["duration_s"].to_f.positive?

          (sample["cpu_user_s"].to_f + sample["cpu_system_s"].to_f) / sample["duration_s"]
        end)
      end

      # The proxy tree's peak memory (PSS, RSS where PSS is unknown), the
      # largest over the batches; nil unproxied.
      def memory_peak_bytes(records)
        records.filter_map do |r|
          sample = r.proxy&.fetch("sample", nil)
          sample && (sample["pss_peak_bytes"] || sample["rss_peak_bytes"])
        end.max
      end

      # Seed 004's figure: the requests a day holds at rate_per_s.
      def requests_per_day(rate_per_s)
        rate_per_s && rate_per_s * SECONDS_PER_DAY
      end

      def median(values)
        return nil if values.empty?

        sorted = values.sort
        mid = sorted.size / 2
        sorted.size.odd? ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2.0
      end
    end
  end
end
