# frozen_string_literal: true

require_relative "column"
require_relative "column_layout"
require_relative "inside_summary"

module Rackbench
  class Report
    # The configurations table, defined once: every column of the JSON
    # document's configs entries, the terminal table, CSV and the HTML
    # page's configurations table, in the one order they all follow. Each
    # view shows the columns that name it, in this order; the JSON entry
    # holds every column with a value.
    #
    # To add a column: add one Column here at its place (its name, unit,
    # value, and a cell for each view that shows it), and its line to
    # doc/output.md (configs.NAME, and the CSV list when CSV shows it).
    # test/unit/report_columns_test.rb checks both.
    module Columns
      # Conditions a cell can be shown under (Column::Cell#only), each
      # given every configuration entry shown.
      CONDITIONS = {
        # Something measured latency (a micro-benchmark does not).
        latency: ->(entries) { entries.any? { |e| e["latency_us"] } },
        # Responses are large (64 KB or more on average, as the download
        # app's): then MB/s is the figure, not req/s.
        large_responses: lambda do |entries|
          entries.any? { |e| e["bytes_per_s"] && e["rps_median"] && e["bytes_per_s"] >= 65_536 * e["rps_median"] }
        end,
        # Downloads (large responses) or HTTP/2: body MB/s with its
        # interval is a figure of its own.
        body_rate: lambda do |entries|
          entries.any? { |e| e["mb_per_s"] && (e["protocol"] == "h2c" || CONDITIONS[:large_responses].call([e])) }
        end,
        # A configuration ran in open loop: the offered rate goes beside
        # the achieved one.
        open_loop: ->(entries) { entries.any? { |e| e["offered_rps"] } },
        # A configuration ran behind a proxy (proxy:): its figures and the
        # requests a day go beside the others.
        proxied: ->(entries) { entries.any? { |e| e["proxy_memory_peak_bytes"] || e["cache_hit_ratio"] } },
        # A proxy with a cache ran.
        cached: ->(entries) { entries.any? { |e| e["cache_hit_ratio"] } },
        # An app had services (services:).
        served: ->(entries) { entries.any? { |e| e["services"]&.any? } },
        # A configuration ran over TLS (load.tls): its handshakes' cost and
        # the share of responses that paid one go beside the others.
        tls: ->(entries) { entries.any? { |e| e["tls_handshake_share"] || e["tls_handshake_us"] } },
        # A WebSocket workload (load.workload connect, echo, broadcast):
        # its clients, failures, round trips, delivery, memory per
        # connection and CPU per broadcast go beside the others.
        websocket: ->(entries) { entries.any? { |e| e["ws_clients"] } },
        # A broadcast workload: its delivery and CPU per broadcast.
        broadcast: ->(entries) { entries.any? { |e| e["delivery_ratio"] } }
      }.freeze

      RATE_UNIT = ->(layout) { layout.rate_unit }
      LOW = ->(pair) { pair&.first }
      HIGH = ->(pair) { pair&.last }
      LATENCY_KEYS = %w[p50 p90 p99 p99_9 max mean].freeze
      LATENCY_SHOWN = %w[p50 p99 p99_9].freeze # the terminal's and the page's
      private_constant :RATE_UNIT, :LOW, :HIGH, :LATENCY_KEYS, :LATENCY_SHOWN

      # A Column::Cell (heading, then Cell's options).
      def self.cell(heading, **options)
        Column.cell(heading, **options)
      end

      # The two CSV cells of an interval column: NAME_low and NAME_high.
      def self.interval_cells(name)
        [cell("#{name}_low", pick: LOW), cell("#{name}_high", pick: HIGH)]
      end

      # The p50, p99 and p99.9 cells of latency_us, shown under +only+.
      def self.latency_cells(only = nil)
        LATENCY_SHOWN.map { |k| cell(k.tr("_", "."), pick: ->(lat) { lat&.[](k) }, only: only) }
      end
      # The CSV cells of configs.inside: each figure's median and the two
      # ends of its interval (NAME_median, NAME_ci95_low, NAME_ci95_high).
      def self.inside_cells
        InsideSummary::FIGURES.keys.flat_map do |name|
          figure = ->(inside) { inside&.dig("figures", name) }
          [cell("#{name}_median", pick: ->(inside) { figure.call(inside)&.fetch("median") }),
           cell("#{name}_ci95_low", pick: ->(inside) { figure.call(inside)&.fetch("ci95")&.first }),
           cell("#{name}_ci95_high", pick: ->(inside) { figure.call(inside)&.fetch("ci95")&.last })]
        end
      end
      # The CSV cells of configs.instructions: the median of instructions
      # per request with its interval and CV, the batches, and against the
      # baseline the ratio with its interval and the verdict.
      def self.instructions_cells
        per = ->(key) { ->(doc) { doc&.dig("per_request", key) } }
        against = ->(key) { ->(doc) { doc&.dig("against_baseline", key) } }
        [cell("instructions_per_request_median", pick: per.call("median")),
         cell("instructions_per_request_ci95_low", pick: ->(doc) { doc&.dig("per_request", "ci95")&.first }),
         cell("instructions_per_request_ci95_high", pick: ->(doc) { doc&.dig("per_request", "ci95")&.last }),
         cell("instructions_per_request_cv", pick: per.call("cv")),
         cell("instructions_batches", pick: ->(doc) { doc&.fetch("batches") }),
         cell("instructions_ratio", pick: against.call("ratio")),
         cell("instructions_ratio_ci95_low", pick: ->(doc) { doc&.dig("against_baseline", "ratio_ci95")&.first }),
         cell("instructions_ratio_ci95_high", pick: ->(doc) { doc&.dig("against_baseline", "ratio_ci95")&.last }),
         cell("instructions_verdict", pick: against.call("verdict"))]
      end
      # The CSV cells of configs.cycles: the median of estimated cycles
      # per request with its interval, and against the baseline the ratio
      # with its interval and the verdict.
      def self.cycles_cells
        [cell("cycles_per_request_median", pick: ->(doc) { doc&.dig("per_request", "median") }),
         cell("cycles_per_request_ci95_low", pick: ->(doc) { doc&.dig("per_request", "ci95")&.first }),
         cell("cycles_per_request_ci95_high", pick: ->(doc) { doc&.dig("per_request", "ci95")&.last }),
         cell("cycles_ratio", pick: ->(doc) { doc&.dig("against_baseline", "ratio") }),
         cell("cycles_ratio_ci95_low", pick: ->(doc) { doc&.dig("against_baseline", "ratio_ci95")&.first }),
         cell("cycles_ratio_ci95_high", pick: ->(doc) { doc&.dig("against_baseline", "ratio_ci95")&.last }),
         cell("cycles_verdict", pick: ->(doc) { doc&.dig("against_baseline", "verdict") })]
      end
      # The CSV cells of configs.services: each service's figures
      # (postgresql_cpu_cores, ..., memcached_memory_peak_bytes), empty for
      # a configuration without it.
      def self.service_cells
        Services.names.product(ServiceFigures::CSV_FIGURES).map do |service, figure|
          cell("#{service}_#{figure}", pick: ->(list) { list&.find { |e| e["name"] == service }&.fetch(figure) })
        end
      end
      # "980/1000": connected of asked.
      def self.ws_clients(connected, entry)
        return Units::NONE if connected.nil?

        asked = entry["ws_clients_requested"]
        asked && asked != connected ? "#{connected.round}/#{asked}" : connected.round.to_s
      end
      private_class_method :cell, :interval_cells, :latency_cells, :inside_cells, :instructions_cells, :service_cells,
                           :cycles_cells

      ALL = [
        Column.new("id", value: :id, csv: cell("config_id")),
        Column.new("label", value: :label),
        Column.new("dims", value: :dims, csv: Column::Dimensions.new, terminal: Column::Dimensions.new(
          ->(value, _, _) { Report.format_dim(value) }
        ), html: Column::Dimensions.new),
        Column.new("batches", unit: :count, value: :batches, csv: cell("batches"),
                   terminal: cell("batches", format: lambda { |n, e, _|
                     e["failed"].to_i.positive? ? "#{n} (+#{e["failed"]} failed)" : n.to_s
                   }),
                   html: cell("batches", format: lambda { |n, e, _|
                     e["failed"].to_i.positive? ? "#{n.to_i} + #{e["failed"].to_i} failed" : n.to_i.to_s
                   })),
        Column.new("failed", unit: :count, value: :failed, csv: cell("failed")),
        Column.new("rps_median", unit: :rate, value: :rps_median, csv: cell("rps_median"),
                   terminal: cell(RATE_UNIT, format: :rate_rounded),
                   html: cell(->(layout) { "median #{layout.rate_unit}" })),
        Column.new("offered_rps", unit: :rate, value: :offered_rps,
                   terminal: cell("offered", format: :rate_rounded, only: :open_loop),
                   html: cell("offered/s", only: :open_loop)),
        # The terminal writes the median's interval as ± its half-width in
        # percent of the median, beside the median (the page and CSV give
        # both ends, rps_ci95 below).
        Column.new("rps_ci95_relative", terminal: cell("95% CI", format: lambda { |_, e, _|
          Units.relative_interval(e["rps_ci95"], e["rps_median"])
        })),
        Column.new("rps_mean", unit: :rate, value: ->(c) { c.summary.mean }, csv: cell("rps_mean")),
        Column.new("rps_stddev", unit: :rate, value: ->(c) { c.summary.stddev }, csv: cell("rps_stddev")),
        Column.new("rps_mad", unit: :rate, value: ->(c) { c.summary.mad }, csv: cell("rps_mad")),
        Column.new("rps_min", unit: :rate, value: ->(c) { c.summary.min }, csv: cell("rps_min")),
        Column.new("rps_max", unit: :rate, value: ->(c) { c.summary.max }, csv: cell("rps_max")),
        Column.new("rps_cv", unit: :fraction, value: ->(c) { c.summary.cv }, csv: cell("rps_cv"),
                   terminal: cell("CV", format: [:percent, { digits: 1 }])),
        Column.new("rps_ci95", unit: :rate, value: :rps_ci, csv: interval_cells("rps_ci95"),
                   html: cell("95% CI", format: ->(ci, _, _) { Units.interval(ci, :rate) })),
        Column.new("rps_per_batch", unit: :rate, value: :rps_values),
        Column.new("batch_numbers", unit: :count, value: :batch_numbers),
        Column.new("baseline_id", value: ->(c) { c.baseline_config&.id }),
        Column.new("ratio", unit: :ratio, value: :ratio, csv: cell("ratio"), terminal: cell("ratio"),
                   html: cell("ratio")),
        # The terminal leaves the baseline's interval to itself out.
        Column.new("ratio_ci95", unit: :ratio, value: :ratio_ci, csv: interval_cells("ratio_ci95"),
                   terminal: cell("ratio 95% CI", format: lambda { |ci, e, _|
                     e["verdict"] == "baseline" ? Units::NONE : Units.interval(ci, :ratio, separator: "–")
                   }),
                   html: cell("ratio 95% CI", format: ->(ci, _, _) { Units.interval(ci, :ratio) })),
        Column.new("verdict", value: :verdict, csv: cell("verdict"),
                   terminal: cell("verdict", align: :left, markup: :verdict, format: lambda { |verdict, e, layout|
                     needed = e["batches_needed"]
                     needed ? "#{verdict} (#{needed} batches for #{Units.percent_trimmed(layout.detect)})" : verdict
                   }),
                   html: cell("verdict", align: :left, markup: :verdict)),
        Column.new("verdict_explanation", value: ->(c) { c.comparison&.explanation }),
        Column.new("batches_needed", unit: :count, value: ->(c) { c.comparison&.batches_needed },
                   csv: cell("batches_needed"), html: cell("batches needed")),
        Column.new("latency_us", unit: :us, value: :latency_us,
                   csv: LATENCY_KEYS.map { |k| cell("latency_#{k}_us", pick: ->(lat) { lat&.[](k) }) },
                   terminal: latency_cells(:latency), html: latency_cells),
        Column.new("latency_curve_us", unit: :us, value: ->(c) { c.histogram&.curve_us }),
        Column.new("error_rate", unit: :fraction, value: :error_rate, csv: cell("error_rate"),
                   html: cell("errors")),
        Column.new("bytes_per_s", unit: :bytes_per_s, value: :bytes_per_s, csv: cell("bytes_per_s"),
                   terminal: cell("MB/s", format: [:megabytes, { unit: false }], only: :large_responses),
                   html: cell("received/s")),
        Column.new("protocol", value: :protocol),
        # (CSV: after the inside figures, see mb_per_s_csv below.)
        Column.new("mb_per_s", unit: :rate, value: :mb_per_s,
                   terminal: cell("body MB/s", format: lambda { |mb, e, _|
                     next Units::NONE if mb.nil?

                     e["mb_per_s_ci95"] ? "#{Units.rate(mb)} #{Units.relative_interval(e["mb_per_s_ci95"], mb)}" : Units.rate(mb)
                   }, only: :body_rate),
                   html: cell("body MB/s", only: :body_rate)),
        Column.new("mb_per_s_ci95", unit: :rate, value: :mb_per_s_ci,
                   html: cell("MB/s 95% CI", format: ->(ci, _, _) { Units.interval(ci, :rate) }, only: :body_rate)),
        # load.tls: a full handshake's time, a resumed one's, and the share
        # of the window's responses that waited for a handshake
        # (LoadResult::TlsFigures). (CSV: at the end, see tls_csv.)
        Column.new("tls_handshake_us", unit: :us, value: :tls_handshake_us,
                   terminal: cell("TLS hs", only: :tls), html: cell("TLS handshake", only: :tls)),
        Column.new("tls_resumed_handshake_us", unit: :us, value: :tls_resumed_handshake_us,
                   html: cell("resumed handshake", only: :tls)),
        Column.new("tls_handshake_share", unit: :fraction, value: :tls_handshake_share,
                   terminal: cell("paid hs", format: [:percent, { digits: 1 }], only: :tls),
                   html: cell("responses that paid a handshake", format: [:percent, { digits: 2 }], only: :tls)),
        Column.new("rss_peak_bytes", unit: :bytes, value: :rss_peak_bytes, csv: cell("rss_peak_bytes"),
                   html: cell("RSS peak")),
        # The terminal has room for one memory figure: PSS, RSS where PSS
        # is unknown.
        Column.new("pss_peak_bytes", unit: :bytes, value: :pss_peak_bytes, csv: cell("pss_peak_bytes"),
                   terminal: cell("PSS peak", format: ->(pss, e, _) { Units.megabytes(pss || e["rss_peak_bytes"]) }),
                   html: cell("PSS peak")),
        Column.new("rps_per_gb", unit: :rate, value: :rps_per_gb, csv: cell("rps_per_gb"),
                   html: cell(->(layout) { "#{layout.rate_unit} per GB" }, format: :rate_grouped)),
        # Per entry of a request list (EntrySummary#to_h); the views show
        # them in sections of their own (a row per entry), not as cells.
        Column.new("entries", value: ->(c) { c.entries&.map(&:to_h) }),
        Column.new("flags", value: :flags,
                   csv: cell("flags", format: ->(flags, _, _) { Array(flags).map { |f| f["kind"] }.uniq.join(";") }),
                   terminal: cell("flags", format: lambda { |flags, _, _|
                     Array(flags).map { |f| Flags::MARKS.fetch(f["kind"], "?") }.uniq.join
                   }),
                   html: cell("flags", align: :left, markup: :flags)),
        # Inside the server (InsideSummary#to_h): the views show it in a
        # section of its own, a table per configuration; CSV flattens it
        # after the columns 0.1 wrote, so theirs keep their places.
        Column.new("inside", value: :inside_h, csv: inside_cells),
        # Behind a proxy (ProxyFigures): its cache's hit ratio over the
        # window, its own CPU (cores) and memory, and seed 004's figure;
        # after flags and inside, so that CSV keeps the places of the columns
        # written before them.
        Column.new("cache_hit_ratio", unit: :fraction, value: :cache_hit_ratio, csv: cell("cache_hit_ratio"),
                   terminal: cell("hits", format: [:percent, { digits: 1 }], only: :cached),
                   html: cell("cache hits", format: [:percent, { digits: 1 }], only: :cached)),
        Column.new("proxy_cpu_cores", value: :proxy_cpu_cores, csv: cell("proxy_cpu_cores"),
                   terminal: cell("proxy CPU", format: ->(v, _, _) { v ? format("%.2f", v) : Units::NONE }, only: :proxied),
                   html: cell("proxy CPU (cores)", format: ->(v, _, _) { v ? format("%.2f", v) : Units::NONE },
                              only: :proxied)),
        Column.new("proxy_memory_peak_bytes", unit: :bytes, value: :proxy_memory_peak_bytes,
                   csv: cell("proxy_memory_peak_bytes"), terminal: cell("proxy mem", only: :proxied),
                   html: cell("proxy memory peak", only: :proxied)),
        Column.new("requests_per_day", unit: :rate, value: :requests_per_day, csv: cell("requests_per_day"),
                   terminal: cell("req/day", format: :rate_grouped, only: :proxied),
                   html: cell("requests/day", format: :rate_grouped)),
        Column.new("ran", value: :ran),
        # Body MB/s and its interval in CSV, after every column written
        # before them (0.1's, the inside figures', the proxy's), which keep their
        # places.
        Column.new("mb_per_s_csv", csv: [
                     cell("mb_per_s", format: ->(_, e, _) { e["mb_per_s"] }),
                     cell("mb_per_s_ci95_low", format: ->(_, e, _) { e["mb_per_s_ci95"]&.first }),
                     cell("mb_per_s_ci95_high", format: ->(_, e, _) { e["mb_per_s_ci95"]&.last })
                   ]),
        # The TLS figures in CSV, after every column written before them.
        Column.new("tls_csv", csv: %w[tls_handshake_us tls_resumed_handshake_us tls_handshake_share].map do |name|
          cell(name, format: ->(_, e, _) { e[name] })
        end),
        # The bundle's gems its servers loaded, and those whose versions
        # differ from another configuration of its app (CSV: "rails 7.2.4;
        # railties 7.2.4"), after every column written before them.
        Column.new("gems", value: :gems),
        Column.new("differing_gems", value: :differing_gems,
                   csv: cell("differing_gems", format: lambda { |gems, _, _|
                     Hash(gems).map { |name, version| "#{name} #{version}" }.join("; ")
                   })),
        # How the native gems among them were built (JSON only; the views
        # note the platforms that differ between configurations: GemNotes).
        Column.new("gem_platforms", value: ->(config) { config.gem_platforms || {} }),
        # Instructions per request (`measure: instructions`,
        # InstructionsSummary#to_h): the views show it in a section of its
        # own (a row per configuration, the time figures beside when both
        # were measured); CSV after every column written before it.
        Column.new("instructions", value: :instructions_h, csv: instructions_cells),
        # The app's services (ServiceFigures): CPU and memory over the
        # window per service; the terminal writes them in a section of their
        # own; CSV after every column written before them.
        Column.new("services", value: :services, csv: service_cells,
                   html: cell("services", align: :left, only: :served, format: lambda { |list, _, _|
                     Array(list).map { |e| ServiceFigures.text(e) }.join("; ")
                   })),
        # Estimated cycles per request (`instructions: { cache_sim: true }`,
        # CyclesSummary#to_h): shown in the instructions' sections; CSV
        # after every column written before it.
        Column.new("cycles", value: :cycles_h, csv: cycles_cells),
        # WebSocket workloads (WebsocketFigures): clients connected (and
        # asked), the seconds until all were, failures and losses by
        # reason, the round trip's p95, the broadcasts' delivery, the
        # server's memory per connection (PSS over idle) and CPU per
        # broadcast; CSV after every column written before them.
        Column.new("ws_clients", unit: :count, value: :ws_connected, csv: cell("ws_clients"),
                   terminal: cell("clients", format: ->(n, e, _) { ws_clients(n, e) }, only: :websocket),
                   html: cell("clients connected", format: ->(n, e, _) { ws_clients(n, e) }, only: :websocket)),
        Column.new("ws_clients_requested", unit: :count, value: :ws_requested, csv: cell("ws_clients_requested")),
        Column.new("ws_time_to_all_s", value: :ws_time_to_all_s, csv: cell("ws_time_to_all_s"),
                   terminal: cell("all in", format: ->(s, _, _) { s ? Units.seconds(s) : Units::NONE }, only: :websocket),
                   html: cell("time to all connected", format: ->(s, _, _) { s ? Units.seconds(s) : Units::NONE },
                              only: :websocket)),
        Column.new("ws_connection_failures", unit: :count, value: :ws_connection_failures,
                   csv: cell("ws_connection_failures", format: ->(f, _, _) { f&.map { |k, n| "#{k}=#{n}" }&.join(";") }),
                   terminal: cell("failed", format: ->(f, _, _) { WebsocketFigures.failures_text(f) }, only: :websocket),
                   html: cell("failed or lost", align: :left, only: :websocket,
                              format: ->(f, _, _) { WebsocketFigures.failures_text(f) })),
        Column.new("rtt_p95_us", unit: :us, value: :rtt_p95_us, csv: cell("rtt_p95_us"),
                   terminal: cell("p95", only: :websocket), html: cell("p95", only: :websocket)),
        Column.new("delivery_ratio", unit: :fraction, value: :delivery_ratio, csv: cell("delivery_ratio"),
                   terminal: cell("delivery", format: [:percent, { digits: 2 }], only: :broadcast),
                   html: cell("delivery", format: [:percent, { digits: 3 }], only: :broadcast)),
        Column.new("memory_per_connection_bytes", unit: :bytes, value: :memory_per_connection_bytes,
                   csv: cell("memory_per_connection_bytes"),
                   terminal: cell("mem/conn", format: :bytes, only: :websocket),
                   html: cell("memory per connection", format: :bytes, only: :websocket)),
        Column.new("cpu_us_per_broadcast", unit: :us, value: :cpu_us_per_broadcast, csv: cell("cpu_us_per_broadcast"),
                   terminal: cell("CPU/bcast", only: :broadcast), html: cell("server CPU per broadcast", only: :broadcast))
      ].freeze

      module_function

      # The JSON configuration entry of +config+ (a ConfigSummary): every
      # column of +columns+ (default: ALL) that has a value, by name.
      def entry(config, columns = ALL)
        columns.select(&:json?).to_h { |column| [column.name, column.value_of(config)] }
      end
    end
  end
end
