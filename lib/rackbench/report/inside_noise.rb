# frozen_string_literal: true

module Rackbench
  class Report
    # Which throughput measure was the lower-noise one in this run: server
    # CPU µs per request or requests/s, by the median over configurations of
    # each one's coefficient of variation over the same batches
    # (InsideSummary#noise). doc/methodology.md ("Server CPU per request
    # against requests/s") explains why the two can differ: requests/s
    # carries every stall of the machine, CPU per request only the work the
    # server did.
    module InsideNoise
      NAMES = { "cpu_us_per_request" => "server CPU µs per request", "rps" => "requests/s" }.freeze

      module_function

      # The report document's "inside_noise" (doc/output.md) from the
      # configurations' inside entries (Hashes of configs.inside, or nil):
      # {"configs", "rps_cv_median", "cpu_us_per_request_cv_median",
      # "lower_noise", "text"}, or nil when no configuration has both CVs.
      def of(insides)
        noises = insides.filter_map { |inside| inside && inside["noise"] }
                        .select { |n| n["rps_cv"] && n["cpu_us_per_request_cv"] }
        return nil if noises.empty?

        rps = Stats.median(noises.map { |n| n["rps_cv"] })
        cpu = Stats.median(noises.map { |n| n["cpu_us_per_request_cv"] })
        lower = InsideSummary.lower_noise(rps, cpu)
        { "configs" => noises.size, "rps_cv_median" => rps, "cpu_us_per_request_cv_median" => cpu,
          "lower_noise" => lower, "text" => text(lower, rps, cpu, noises.size) }
      end

      # "Lower-noise measure in this run: server CPU µs per request (median
      # CV 0.8% over 2 configurations, requests/s 2.1%)."
      def text(lower, rps_cv, cpu_cv, configs)
        over = "over #{configs} configuration#{"s" unless configs == 1}"
        cvs = "CV of server CPU µs per request #{Units.percent(cpu_cv, digits: 1)}, " \
              "of requests/s #{Units.percent(rps_cv, digits: 1)}"
        return "Neither measure was lower-noise in this run (median #{cvs} #{over})." unless lower

        "Lower-noise measure in this run: #{NAMES.fetch(lower)} (median #{cvs} #{over})."
      end
    end
  end
end
