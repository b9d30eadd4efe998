# frozen_string_literal: true

module Rackbench
  module Trial
    class Script < Kind
      # What a micro-benchmark's figures are, from its document (doc/micro.md):
      # messages per second of the measured round, its messages, the
      # measured and warmup rounds' lengths, memory summed over the master
      # and its workers (VmHWM; PSS at the end of the measured round, when
      # the benchmark holds the most: the kernel keeps no PSS peak). A
      # single wrong or missing reply fails the whole trial, so an ok one
      # has no failed message.
      module Reading
        extend Trial::Reading

        module_function

        def rate_unit(_record = nil) = "msg/s"
        # A failed run has no rate: its round did not complete as asked, or
        # its processes ran something other than the variant.
        def rate(record) = record.ok? ? record.result&.fetch("messages_per_s", nil) : nil
        def requests(record) = record.ok? ? record.result&.fetch("messages", nil) : nil
        def failed_requests(record) = record.ok? ? 0 : nil
        def attempts(record) = requests(record)
        def measure_s(record) = record.result&.fetch("measured_s", nil)
        def warmup_s(record) = record.result&.fetch("warmup_s", nil)
        def rss_peak_bytes(record) = record.result&.fetch("rss_peak_bytes", nil)
        def pss_peak_bytes(record) = record.result&.fetch("pss_end_bytes", nil)

        def summary(record)
          text = format("ok %.1f msg/s", record.rate.to_f)
          setup_s = record.result&.fetch("setup_s", nil)
          setup_s ? "#{text}, setup #{setup_s < 1 ? format("%.1fms", setup_s * 1000) : format("%.2fs", setup_s)}" : text
        end
      end
    end
  end
end
