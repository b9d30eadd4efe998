# frozen_string_literal: true

module Rackbench
  class Report
    # What the app's services cost in a configuration, over its ok
    # batches, from each trial's services documents (Trial::Record#services:
    # each service's process tree sampled over exactly the window). Pure
    # functions of the records.
    #
    #   ServiceFigures.of(records)
    #   # => [{ "name" => "postgresql", "title" => "PostgreSQL", "version" => "15.18", "batches" => 5,
    #   #       "cpu_cores" => 0.38, "cpu_us_per_request" => 112.0, "memory_peak_bytes" => 47_000_000 }]
    module ServiceFigures
      TITLES = { "postgresql" => "PostgreSQL", "redis" => "Redis", "memcached" => "memcached" }.freeze
      # The figures each service has in CSV, after its name
      # (postgresql_cpu_cores, ...).
      CSV_FIGURES = %w[cpu_cores cpu_us_per_request memory_peak_bytes].freeze

      module_function

      # One entry per service the records name, in the order they name
      # them; nil when no record has a service.
      #
      # cpu_cores :: the service's CPU (user + system) per second of the window: 0.38 is 38% of one CPU
      #              (the median over the batches)
      # cpu_us_per_request :: its CPU over the window divided by the requests of the window, in µs
      #                       (the median over the batches)
      # memory_peak_bytes :: its tree's peak PSS (RSS where PSS is unknown), the largest over the batches
      def of(records)
        samples = records.flat_map do |record|
          Array(record.services).map { |doc| [doc, record.requests] }
        end
        return nil if samples.empty?

        samples.group_by { |doc, _| doc["name"] }.map { |name, docs| entry(name, docs) }
      end

      # "PostgreSQL 15.18: 38% of a CPU, 112 µs per request, 47.0 MB" (what
      # the terminal and the page write for one entry of .of).
      def text(entry)
        cpu = entry["cpu_cores"] ? "#{Units.percent_trimmed(entry["cpu_cores"], digits: 0)} of a CPU" : "CPU unknown"
        per_request = entry["cpu_us_per_request"] ? ", #{Units.latency_us(entry["cpu_us_per_request"])} per request" : ""
        memory = entry["memory_peak_bytes"] ? ", #{Units.megabytes(entry["memory_peak_bytes"])} peak" : ""
        "#{entry["title"]}#{" #{entry["version"]}" if entry["version"]}: #{cpu}#{per_request}#{memory}"
      end

      def entry(name, docs)
        samples = docs.filter_map { |doc, requests| [doc["sample"], requests] if doc["sample"] }
        {
          "name" => name, "title" => TITLES.fetch(name, name), "version" => docs.filter_map { |doc, _| doc["version"] }.last,
          "batches" => samples.size,
          "cpu_cores" => median(samples.filter_map { |sample, _| cores(sample) }),
          "cpu_us_per_request" => median(samples.filter_map { |sample, requests| per_request_us(sample, requests) }),
          "memory_peak_bytes" => samples.filter_map { |sample, _| sample["pss_peak_bytes"] || sample["rss_peak_bytes"] }.max
        }
      end

      def cores(sample)
        duration_s = sample["duration_s"].to_f
        duration_s.positive? ? cpu_s(sample) / duration_s : nil
      end

      def per_request_us(sample, requests)
        requests.to_i.positive? ? cpu_s(sample) * 1e6 / requests : nil
      end

      def cpu_s(sample)
        sample["cpu_user_s"].to_f + sample["cpu_system_s"].to_f
      end

      def median(values)
        ProxyFigures.median(values)
      end

      private_class_method :entry, :cores, :per_request_us, :cpu_s, :median
    end
  end
end
