# frozen_string_literal: true

module Rackbench
  # The per-trial table of one stored experiment (`rackbench report
  # --trials`): each trial as it was measured, in plan order. Statistics
  # across batches are Report's.
  class TrialReport
    STANDARD_DIMS = %w[ruby server app processes threads].freeze

    attr_reader :experiment

    # store :: an open Store
    # :experiment_id :: which experiment (default: the latest, or the latest named :name)
    # :name :: experiment name to pick the latest of (default: any)
    def initialize(store, experiment_id: nil, name: nil)
      @experiment = experiment_id ? store.experiment(experiment_id) : store.latest_experiment(name: name)
      unless @experiment
        where = name ? "named '#{name}' " : ""
        raise UsageError, "no experiment #{where}in #{store.location}: run one with rackbench run"
      end

      @rows = store.trials(@experiment[:id]).sort_by { |r| [r.position, r.batch] }.map { |record| row(record) }
    end

    # The table and the failed trials' reasons, within +width+ columns
    # (Text::Width; nil: no limit).
    def table(width: nil)
      extra = extra_dims
      headings = ["#", "ruby", "server", "app", "proc", "thr", *extra, "batch", "status", "req/s", "p50", "p99",
                  "RSS peak", "PSS peak"]
      rows = @rows.map do |row|
        [row[:position], row[:ruby], row[:server], row[:app], row[:processes], row[:threads],
         *extra.map { |d| row[:dims][d] }, row[:batch], status_text(row), Units.rate(row[:rps]),
         latency(row, "p50"), latency(row, "p99"), Units.megabytes(row[:rss_peak_bytes]),
         Units.megabytes(row[:pss_peak_bytes])]
      end
      # The trial's number and its dimensions lead each continued table.
      table = Text::Table.new(title: "#{@experiment[:name]} (#{@rows.size} trials)", headings: headings, rows: rows,
                              right: (6 + extra.size + 2...headings.size).to_a, keys: 6 + extra.size, width: width)
      failures = @rows.reject { |r| r[:status] == "ok" }
                      .map { |r| "  ##{r[:position]}: #{r[:reason].to_s.lines.first.to_s.strip}" }
      Text::Wrap.prose([table.to_s, *(["Failed trials:"] + failures unless failures.empty?)].join("\n") << "\n", width)
    end

    private

    # What the table shows of a Trial::Record.
    def row(record)
      { position: record.position, ruby: record.ruby, server: record.server, app: record.app,
        processes: record.processes, threads: record.threads, dims: record.dims, batch: record.batch,
        status: record.status, reason: record.reason, rps: record.rate, latency_us: record.latency_us,
        rss_peak_bytes: record.rss_peak_bytes, pss_peak_bytes: record.pss_peak_bytes,
        profiled: Profile.profiled?(record) }
    end

    # Dimensions beyond the standard ones that vary in this experiment
    # (load.connections, env.X, ...): shown as extra columns.
    def extra_dims
      @rows.flat_map { |row| row[:dims].keys }.uniq - STANDARD_DIMS
    end

    # A profiled trial is listed as measured, and says it counts in no
    # statistic (Report leaves it out).
    def status_text(row)
      text = row[:status] == "ok" ? "ok" : "FAILED"
      row[:profiled] ? "#{text} (profiled)" : text
    end

    def latency(row, key)
      Units.latency_us(row[:latency_us]&.fetch(key, nil))
    end
  end
end
