# frozen_string_literal: true

module Rackbench
  class HtmlReport
    module Charts
      # The two moments the counting agent reads each process's memory.
      MEMORY_MOMENTS = ["warmup end", "window end"].freeze
      ROLE_COLORS = { "worker" => "#4c78a8", "single" => "#2e9e44", "master" => "#d9a21b" }.freeze

      module_function

      # The memory chart of one configuration's inside section: every
      # process of every batch as a line from its PSS at the warmup's end
      # to its PSS at the window's end (MB, 10^6 bytes), coloured by role,
      # so growth over the measured window slopes up and a master stands
      # apart from its workers. nil when the configuration has no
      # per-process memory (configs.inside.memory).
      def inside_memory(config)
        rows = Array(config.dig("inside", "memory")).flat_map { |point| inside_memory_rows(point) }
        return nil if rows.empty?

        roles = ROLE_COLORS.select { |role, _| rows.any? { |r| r["role"] == role } }
        {
          width: 260, height: 220, data: { values: rows },
          encoding: {
            x: { field: "at", type: "ordinal", sort: MEMORY_MOMENTS, title: nil, axis: { labelAngle: 0 } },
            y: { field: "mb", type: "quantitative", scale: { zero: false, padding: 12 }, title: "PSS (MB)" },
            color: { field: "role", type: "nominal", title: "process", scale: { domain: roles.keys, range: roles.values } },
            detail: { field: "process" }
          },
          layer: [
            { mark: { type: "line", strokeWidth: 1.5, opacity: 0.7 } },
            { mark: { type: "point", filled: true, size: 40 },
              encoding: { tooltip: [{ field: "process" }, { field: "at", title: "at" },
                                    { field: "mb", title: "PSS (MB)", format: ".1f" }] } }
          ]
        }
      end

      # One row per known PSS of a process of configs.inside.memory.
      def inside_memory_rows(point)
        name = "batch #{point["batch"].to_i} pid #{point["pid"].to_i} (#{point["role"]})"
        [["warmup end", point["warmup_end_pss_bytes"]], ["window end", point["window_end_pss_bytes"]]].filter_map do |at, bytes|
          next unless bytes.is_a?(Numeric)

          { "process" => name, "role" => point["role"].to_s, "at" => at, "mb" => bytes / 1e6 }
        end
      end
    end
  end
end
