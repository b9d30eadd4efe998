# frozen_string_literal: true

module Rackbench
  module Capacity
    # The terminal table of a capacity document (Summary#to_h): one row per
    # configuration, then a line for each search that gave no answer or a
    # capped one, and for invalid steps, so that no figure stands without
    # what limits it.
    module Table
      HEADINGS = ["configuration", "capacity req/s", "95% interval", "resolution", "requests/day", "p50", "p95",
                  "p99", "steps", "invalid"].freeze
      # A broadcast's search: clients, and no requests a day.
      BROADCAST_HEADINGS = ["configuration", "capacity clients", "95% interval", "resolution", "p50", "p95", "p99",
                            "steps", "invalid"].freeze

      module_function

      # The table and its notes as text. +doc+ :: Summary#to_h (String keys).
      # :width :: the most columns a line takes (Text::Width; default: nil: no limit)
      def render(doc, width: nil)
        settings = doc["settings"]
        broadcast = settings["unit"] == "clients"
        delivery = broadcast ? "delivery >= #{Units.percent_trimmed(settings["min_delivery_ratio"], digits: 3)}, " : ""
        title = "Capacity: #{"broadcast " if broadcast}#{settings["percentile"]} <= " \
                "#{Units.latency_us(settings["target_us"])}, #{delivery}" \
                "errors <= #{Units.percent_trimmed(settings["max_error_ratio"], digits: 2)}, " \
                "#{doc["experiment"]["batches"]} batch#{"es" unless doc["experiment"]["batches"] == 1}"
        headings = broadcast ? BROADCAST_HEADINGS : HEADINGS
        table = Text::Table.new(title: title, headings: headings, rows: doc["configs"].map { |c| row(c, broadcast) },
                                right: (1...headings.size).to_a, width: width)
        Text::Wrap.prose([table.to_s, *notes(doc)].join("\n"), width)
      end

      def row(config, broadcast = false)
        latency = config["latency_us"] || {}
        capacity = config["capacity_rps"]
        unit = broadcast ? "clients" : "req/s"
        cells = [config["label"], capacity ? "#{"≥ " if config["capped"]}#{Units.rate_rounded(capacity)}" : "none",
                 Units.interval(config["interval_rps"], :rate_rounded),
                 config["resolution_rps"] ? "#{Units.rate_rounded(config["resolution_rps"])} #{unit}" : Units::NONE]
        cells << (capacity ? Units.rate_grouped(config["requests_per_day"]) : Units::NONE) unless broadcast
        cells + [Units.latency_us(latency["p50"]), Units.latency_us(latency["p95"]), Units.latency_us(latency["p99"]),
                 config["steps_run"].to_s, config["invalid_steps"].to_s]
      end

      # One line per search without a plain answer, and per invalid step.
      def notes(doc)
        doc["configs"].flat_map do |config|
          config["searches"].flat_map do |search|
            head = "  #{config["label"]}, batch #{search["batch"]}"
            lines = []
            lines << "#{head}: #{search["note"]}" if search["note"]
            search["steps"].select { |s| s["status"] == "invalid" }.each do |step|
              lines << "#{head}: step #{step["index"]} at #{step["rate"]} #{doc["settings"]["unit"] || "req/s"} " \
                       "INVALID (not concluded from): " \
                       "#{step["reason"]}"
            end
            lines
          end
        end
      end
    end
  end
end
