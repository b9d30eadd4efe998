# frozen_string_literal: true

module Rackbench
  class Report
    # How every view writes an entry of configs.entries (EntrySummary#to_h,
    # or the same read back from a saved document): one definition, so the
    # terminal, the HTML page and compare say the same.
    module EntryText
      module_function

      # "login", "#1 (first)": the entry's label, marked when it is sent
      # once per session.
      def name(entry)
        label = entry["label"] || entry["name"] || "##{entry["index"]}"
        entry["first"] ? "#{label} (first)" : label.to_s
      end

      # "422: 3, timeout: 2": statuses other than 2xx/3xx, then transport
      # errors of every kind (known or not), non-zero only; "" without any.
      def failures(status, errors)
        bad = (status || {}).reject { |code, _| code.to_i.between?(200, 399) }
        bad.merge(errors || {}).select { |_, n| n.to_i.positive? }.map { |k, n| "#{k}: #{n}" }.join(", ")
      end

      # The measured windows' failures of +entry+ ("" without any).
      def measured_failures(entry)
        failures(entry["status"], entry["errors"])
      end

      # "4 of 14 (422: 4)": the warmups' failures of +entry+ ("" without any).
      def warmup_failures(entry)
        warmup = entry["warmup"]
        return "" unless warmup.is_a?(Hash) && warmup["failed"].to_i.positive?

        attempts = warmup["requests"].to_i + (warmup["errors"] || {}).values.sum(&:to_i)
        "#{warmup["failed"]} of #{attempts} (#{failures(warmup["status"], warmup["errors"])})"
      end
    end
  end
end
