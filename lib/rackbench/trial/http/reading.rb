# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # What an HTTP trial's figures are: its result is the load engine's
      # document (doc/output.md), its sample the Sampler's summary of the
      # server's process tree. Documents of every rackbench version read
      # the same: nothing here validates them (LoadResult does, when the
      # engine hands one over).
      module Reading
        extend Trial::Reading

        module_function

        def rate(record) = record.result&.fetch("rps", nil)
        def requests(record) = record.result&.fetch("requests", nil)
        def latency_us(record) = record.result&.fetch("latency_us", nil)
        def histogram(record) = record.result&.fetch("histogram", nil)
        def measure_s(record) = record.result&.fetch("duration_s", nil)
        def warmup_s(record) = record.result&.dig("warmup", "duration_s")
        def rss_peak_bytes(record) = record.sample&.fetch("rss_peak_bytes", nil)
        def pss_peak_bytes(record) = record.sample&.fetch("pss_peak_bytes", nil)
        def cpu_user_s(record) = record.sample&.fetch("cpu_user_s", nil)
        def cpu_system_s(record) = record.sample&.fetch("cpu_system_s", nil)
        def timeline(record) = record.result&.fetch("timeline", nil)
        def warmup_timeline(record) = record.result&.dig("warmup", "timeline")
        def bytes_per_s(record) = record.result&.fetch("bytes_per_s", nil)
        # Response bodies in MB/s (engines before HTTP/2 did not count them: nil).
        def mb_per_s(record) = record.result&.fetch("mb_per_s", nil)
        # "http1", "h2c" or "h2"; results from before HTTP/2 were all http1.
        def protocol(record) = record.result && record.result.fetch("settings", {}).fetch("protocol", "http1")
        def offered_rps(record) = record.result&.fetch("offered_rps", nil)
        # load.tls: the engine's "tls" object (nil for http://, and for
        # results from engines before TLS).
        def tls(record) = record.result&.fetch("tls", nil)

        # The warmup's requests and its failures (transport errors and
        # statuses other than 2xx/3xx), from the engine's warmup phase:
        # {"requests", "failed", "status", "errors"} (non-zero kinds only),
        # or nil without a result.
        def warmup(record)
          w = record.result&.fetch("warmup", nil)
          return nil unless w.is_a?(Hash)

          { "requests" => w["requests"].to_i, "failed" => LoadResult::Counts.failed(w), "status" => w["status"] || {},
            "errors" => (w["errors"] || {}).select { |_, n| n.to_i.positive? } }
        end

        # Transport errors plus responses other than 2xx/3xx (LoadResult::Counts).
        def failed_requests(record)
          record.result && LoadResult::Counts.failed(record.result)
        end

        def attempts(record)
          record.result && LoadResult::Counts.attempts(record.result)
        end

        # "ok 74.1 req/s, p99 504.37ms, timeout 5.1s calibrated": the
        # timeout is named when a calibration chose it.
        def summary(record)
          text = format("ok %.1f req/s, p99 %s", record.rate.to_f, Units.latency_us(record.latency_us&.fetch("p99", nil)))
          timeout_s = record.load_settings.is_a?(Hash) && record.load_settings["calibration"] &&
                      record.load_settings["timeout_s"]
          timeout_s ? "#{text}, timeout #{Units.seconds(timeout_s, digits: 1)} calibrated" : text
        end
      end
    end
  end
end
