# frozen_string_literal: true

module Rackbench
  module Publish
    module Pages
      # regressions/index.html: every regression of the store, newest
      # first, with its state.
      class RegressionsPage < Page
        # A table of regression summaries (Documents#regression_summary),
        # linked from a page +depth+ directories below the root.
        def self.table(summaries, depth:)
          root = "../" * depth
          rows = summaries.map do |r|
            where = r["testbed"] ? Html.link("#{root}#{r["testbed"]}/index.html", r["experiment"]) : Html.esc(r["experiment"])
            config = if r["testbed"] && r["config_slug"]
                       Html.link("#{root}#{r["testbed"]}/#{r["config_slug"]}.html", r["config_label"])
                     else
                       Html.esc(r["config_label"])
                     end
            [Html.link("#{root}regressions/#{r["id"]}.html", "##{r["id"]}"), Html.state(r["state"]), where, config,
             Html.esc(r["figure_words"]), Html.change(r["figure"], r["change"]), Html.esc(r["range"]),
             Html.date(r["found_run_at"] || r["detected_at"])]
          end
          Html.table(["regression", "state", "experiment", "configuration", "figure", "change", "commit range", "found in the run of"],
                     rows, numbers: [false, false, false, false, false, true, false, false])
        end


        def render
          all = @doc["regressions"]
          counts = Regressions::STATES.map { |s| "#{all.count { |r| r["state"] == s }} #{Regressions.words(s)}" }.join(", ")
          Frame.html(title: "#{@doc["title"]}: regressions", depth: 1, site_title: @doc["title"],
                     data: "../regressions.json", body: <<~BODY)
                       <header><h1>Regressions</h1>
                       <p class="meta">#{all.size} in all: #{esc(counts)}.</p>
                       <p class="how">A regression is a step that made a series worse: found by publish
                       (detected), held in the runs after it (confirmed), gone with a later step back (fixed), or
                       judged by a person a false positive or accepted (rackbench regressions set ID STATE --note
                       TEXT).</p></header>
                       <section>
                       #{all.empty? ? %(<p class="empty">None.</p>) : self.class.table(all, depth: 1)}
                       </section>
                     BODY
        end
      end
    end
  end
end
