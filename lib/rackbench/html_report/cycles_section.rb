# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # The page's "Estimated cycles per request" section, for
    # configurations whose instructions trials ran callgrind's cache
    # simulation (configs.cycles): one row each, as the terminal's
    # (Report::CyclesTerminal), with the instructions' verdict and time's
    # beside its own.
    class CyclesSection
      ID = "cycles"
      TITLE = "Estimated cycles per request"
      HEADINGS = ["configuration", "cycles/request", "95% CI", "LL hits/request", "RAM accesses/request", "ratio",
                  "ratio 95% CI", "verdict", "instructions verdict", "time verdict"].freeze

      def initialize(doc)
        @doc = doc
      end

      def configs
        @configs ||= @doc.configs.select { |c| c["cycles"] }
      end

      def any?
        !configs.empty?
      end

      def render
        return "" unless any?

        <<~HTML
          <section id="#{ID}">
          <h2>#{TITLE}</h2>
          <p class="how">callgrind simulated the caches as well as counting instructions
          (<code>instructions: { cache_sim: true }</code>): first-level caches of 32 kB, a last level of 8 MB, the
          same on every machine. Cycles are estimated as #{esc(configs.first["cycles"]["model"])} (the model CodSpeed
          uses): a change that moves memory traffic rather than instructions (an allocator, a heap's size) shows
          here and not in the instructions. An estimate: no cache is shared with another process, no branch is
          mispredicted (doc/methodology.md).</p>
          #{table}
          </section>
        HTML
      end

      private

      def table
        rows = configs.map do |c|
          doc = c["cycles"]
          against = doc["against_baseline"]
          [@doc.name(c), Units.count_grouped(doc.dig("per_request", "median")),
           Units.interval(doc.dig("per_request", "ci95"), :count_grouped),
           Units.count_grouped(doc.dig("misses_per_request", "ll_hits")),
           Units.count_grouped(doc.dig("misses_per_request", "ram_hits")), Units.ratio(against&.fetch("ratio")),
           Units.interval(against&.fetch("ratio_ci95"), :ratio), against ? against["verdict"] : "baseline",
           c.dig("instructions", "against_baseline", "verdict") || Units::NONE,
           c["batches"].to_i.positive? ? c["verdict"] : Units::NONE].map { |cell| esc(cell) }
        end
        Tables.table(HEADINGS, rows, numbers: [false] + [true] * 6 + [false] * 3)
      end

      def esc(value)
        Escape.html(value)
      end
    end
  end
end
