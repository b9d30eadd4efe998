# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # The page's "Hosts" section, for an experiment whose batches ran on
    # several hosts (a fleet's workers; the JSON's `hosts`,
    # Report::Hosts): one row per host with the batches it ran, its trials,
    # the median of its batch indexes and its comparison with the rest of
    # its testbed, a host that stands apart marked. "" for a run on one
    # host, so a single machine's page is what it was.
    class HostsSection
      ID = "hosts"
      TITLE = "Hosts"
      HEADINGS = ["host", "batches", "ok", "failed", "batch index", "vs the other hosts", "95% CI", "verdict", ""].freeze
      NUMBERS = [false, false, true, true, true, true, true, false, false].freeze

      # doc :: the Document
      def initialize(doc)
        @doc = doc
      end

      def hosts
        Array(@doc.raw["hosts"])
      end

      # Whether the page has the section, for the navigation.
      def any?
        !hosts.empty?
      end

      def render
        return "" unless any?

        <<~HTML
          <section id="#{ID}">
          <h2>#{TITLE}</h2>
          <p class="how">Each batch ran whole on one host. A batch's index is the geometric mean over its
          configurations of the trial's rate over that configuration's median: 1.000 for a batch as fast as the
          experiment's middle. Each host's batch indexes against the other hosts': the ratio of medians with its
          95% interval; a host whose interval lies wholly outside the equivalence band stands apart from its
          testbed (another kernel, a throttled CPU, a noisy neighbour).</p>
          #{Tables.table(HEADINGS, hosts.map { |host| row(host) }, numbers: NUMBERS)}
          </section>
        HTML
      end

      private

      def row(host)
        vs = host["vs_testbed"] || {}
        [host["host"], Array(host["batches"]).join(", "), Units.integer(host["ok"]), Units.integer(host["failed"]),
         Units.ratio(host["batch_index_median"]), Units.ratio(vs["ratio"]), Units.interval(vs["ratio_ci95"], :ratio),
         vs["verdict"] || Units::NONE, host["apart"] ? "stands apart" : ""].map { |cell| Escape.html(cell) }
      end
    end
  end
end
