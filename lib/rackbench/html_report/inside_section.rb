# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # The page's "Inside the server" section: which of CPU per request and
    # requests/s was the lower-noise measure in this run, then per
    # configuration with inside figures (configs.inside) a table of every
    # figure with its interval and its comparison with the baseline, the
    # headline of that comparison, the memory chart (Charts.inside_memory),
    # and whatever the profile hook draws.
    #
    # The profile hook: +profile_html+ is called with each configuration
    # entry (a Hash of the document's configs) and returns the HTML of its
    # profile (a flame graph; escaped by the hook) or nil. A configuration
    # with a profile and no figures still gets its part.
    class InsideSection
      ID = "inside"
      TITLE = "Inside the server"
      HEADINGS = ["figure", "median", "95% CI", "CV", "batches", "vs baseline", "ratio 95% CI", "verdict"].freeze
      NUMBERS = [false, true, true, true, true, true, true, false].freeze

      # doc :: the Document
      # :profile_html :: nil, or a Proc given a configuration entry and
      #                  returning its profile's HTML or nil (default: nil)
      def initialize(doc, profile_html: nil)
        @doc = doc
        @profile_html = profile_html
      end

      # Whether the page has the section (some configuration has figures
      # or a profile), for the navigation.
      def any?
        !parts.empty?
      end

      # The section's HTML, "" when no configuration has figures or a
      # profile (a report of trials without the agent reads as before).
      def render
        return "" unless any?

        noise = @doc.raw.dig("inside_noise", "text")
        <<~HTML
          <section id="#{ID}">
          <h2>#{TITLE}</h2>
          <p class="how">Measured in every server process over the engine's window, per configuration over its ok
          batches: the median, the 95% interval of the median and the CV over batches, and against the baseline the
          ratio of medians with its interval and verdict (higher or lower). CPU per request is the sampler's CPU time
          of the whole process tree over the window, divided by the responses.</p>
          #{noise ? %(<p class="noise">#{esc(noise)}</p>) : ""}
          #{parts.join("\n")}
          </section>
        HTML
      end

      private

      def parts
        @parts ||= @doc.configs.each_with_index.filter_map do |config, i|
          inside = config["inside"]
          profile = @profile_html&.call(config)
          next if inside.nil? && profile.nil?

          [%(<h3 id="#{ID}-#{i}">#{esc(@doc.name(config))}</h3>), *(inside ? figures(inside, i) : []), profile.to_s]
            .reject(&:empty?).join("\n")
        end
      end

      def figures(inside, index)
        rows = Report::InsideSummary.rows(inside).map do |name, figure, row|
          [Report::InsideSummary.label(name), Report::InsideSummary.format(name, figure["median"]),
           interval(name, figure["ci95"]), Units.percent(figure["cv"], digits: 1),
           Array(figure["per_batch"]).size.to_s, Report::InsideCompare.against(name, row),
           Units.interval(row&.fetch("ratio_ci95"), :ratio), row ? row["verdict"] : Units::NONE].map { |c| esc(c) }
        end
        html = [Tables.table(HEADINGS, rows, numbers: NUMBERS)]
        html << %(<p class="note">No counting agent: CPU time from the sampler only.</p>) unless inside["agent"]
        against = inside["against_baseline"]
        if against
          baseline = @doc.name_for_id(inside["baseline_id"])
          html << %(<p class="headline">Against #{esc(baseline)}: #{esc(against["headline"])}</p>)
        end
        missing = inside["missing_processes"].to_i
        if missing.positive?
          html << %(<p class="note">#{missing} process(es) of the trees gave no counts; the sums leave them out.</p>)
        end
        html << memory_chart(inside, index)
        html.compact
      end

      def interval(name, pair)
        return Units::NONE unless pair.is_a?(Array) && pair.size == 2

        "#{Report::InsideSummary.format(name, pair[0])} – #{Report::InsideSummary.format(name, pair[1])}"
      end

      # The chart container and its spec, as Page#chart_section writes
      # them (Scripts::RENDER draws every [data-chart]); nil without memory.
      def memory_chart(inside, index)
        spec = Charts.inside_memory("inside" => inside)
        return nil unless spec

        id = "inside-memory-#{index}"
        %(<p class="how">PSS of every process at the warmup's end and at the window's end, one line per process of ) +
          %(each batch.</p>\n#{Charts.embed(id, spec)})
      end

      def esc(value)
        Escape.html(value)
      end
    end
  end
end
