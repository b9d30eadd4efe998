# frozen_string_literal: true

module Rackbench
  module Publish
    module Pages
      # SLUG/compare.html: any two runs of a testbed side by side. The page
      # holds the list of runs; the two chosen runs' points come from their
      # data files (data/SLUG/runs/ID.js, loaded as scripts: a page opened
      # from disk may not fetch JSON), and SiteScript compares every
      # configuration and figure they share as `compare` does: the ratio of
      # the medians with a percentile bootstrap interval over the batches
      # (2,000 resamples, seeded), and a verdict against the equivalence
      # band. The choice is kept in the address (#a=ID&b=ID), so a
      # comparison can be linked.
      class ComparePage < Page # of Documents#testbed
        RESAMPLES = 2_000

        def render
          settings = @doc["settings"]
          figures = Report::BatchFigures::ALL.to_h do |f|
            [f.name, { "words" => f.words, "better" => f.better.to_s, "unit" => f.unit.to_s,
                       "equivalence" => f.instructions ? settings["instructions_equivalence"] : settings["equivalence"] }]
          end
          runs = @doc["runs"].select { |r| r["status"] == "measured" }.map do |r|
            r.slice("experiment_id", "created_at", "labels_text", "run")
          end
          data = { "runs" => runs, "base" => "../data/#{@doc["slug"]}/runs/", "figures" => figures,
                   "confidence" => settings["confidence"], "resamples" => RESAMPLES }
          Frame.html(title: "Compare two runs: #{@doc["experiment"]}", depth: 1, site_title: @site_title,
                     data: "../data/#{@doc["slug"]}/testbed.json", body: <<~BODY)
                       <header><h1>Compare two runs</h1>
                       <p class="meta"><a href="index.html">#{esc(@doc["experiment"])}</a> on
                       #{esc(@doc["testbed"] ? "testbed #{@doc["testbed"]}" : @doc["machine"])}</p>
                       <p class="how">Every configuration and figure both runs measured: B's median against A's, the
                       ratio's #{esc(Units.percent_trimmed(settings["confidence"]))} percentile bootstrap interval over
                       the batches (#{RESAMPLES} resamples), and the verdict: better or worse when the interval lies
                       outside the equivalence band (±#{esc(Units.percent_trimmed(settings["equivalence"]))}, instructions
                       ±#{esc(Units.percent_trimmed(settings["instructions_equivalence"], digits: 2))}), else no
                       difference detected. Runs with fewer than 2 ok batches give no interval.</p></header>
                       <section id="compare">
                       <div class="compare-pick">
                       <label for="compare-a">A (before)</label><select id="compare-a"></select>
                       <label for="compare-b">B (after)</label><select id="compare-b"></select>
                       </div>
                       <div id="comparison"><p class="empty">Loading the two runs…</p></div>
                       <script type="application/json" id="compare-data">#{HtmlReport::Escape.script_json(data)}</script>
                       </section>
                     BODY
        end
      end
    end
  end
end
