# frozen_string_literal: true

module Rackbench
  module Publish
    module Pages
      # SLUG/CONFIG.html: one configuration of a testbed, each figure's
      # timeline across the runs (TimelineChart) with its threshold and
      # its steps (the run, the size and its interval, the range of
      # commits, the state, the regression), then every run's medians.
      class TimelinePage < Page # of Documents#timeline

        def render
          testbed = @doc["testbed"]
          by_date = @doc["settings"]["order"] == "date"
          sections = @doc["figures"].each_with_index.map { |figure, i| figure_section(figure, i, by_date) }
          Frame.html(title: "#{@doc["config"]["label"]}: #{testbed["experiment"]}", depth: 1, site_title: @site_title,
                     charts: true, data: "../data/#{testbed["slug"]}/#{@doc["config"]["slug"]}.json", body: <<~BODY)
                       <header><h1>#{esc(@doc["config"]["label"])}</h1>
                       <p class="meta"><a href="index.html">#{esc(testbed["experiment"])}</a> on
                       #{esc(testbed["testbed"] ? "testbed #{testbed["testbed"]}" : testbed["machine"])} ·
                       #{esc(@doc["config"]["id"])} · #{@doc["runs"].size} runs</p>
                       <p class="how">Each point is a run's median over its batches, the whisker its
                       #{esc(Units.percent_trimmed(@doc["settings"]["confidence"]))} interval (from
                       #{esc(@doc["settings"]["min_batches"])} ok batches). The dashed lines are the levels between steps;
                       a shaded span is the range of runs a step may lie in (red: worse, green: better); the grey band
                       around the newest level is what a run must leave to be flagged from one night. Red crosses are
                       runs that measured nothing (a failed build, every trial failed).</p></header>
                       #{sections.join("\n")}
                       <section><h2>Every run</h2>
                       <details><summary>#{@doc["runs"].size} runs, newest first</summary>
                       #{runs_table}
                       </details></section>
                     BODY
        end

        private

        def figure_section(figure, index, by_date)
          spec = TimelineChart.spec(figure, @doc["runs"], by_date: by_date)
          chart = spec ? HtmlReport::Charts.embed("timeline-#{index + 1}", spec) : %(<p class="empty">No run measured it.</p>)
          <<~HTML
            <section id="#{esc(figure["figure"])}"><h2>#{esc(figure["words"])}</h2>
            #{chart}
            <p class="note">Threshold: #{esc(threshold(figure["noise"], @doc["settings"]["default_threshold"]))}.</p>
            #{steps(figure)}
            </section>
          HTML
        end

        def steps(figure)
          return %(<p class="empty">No step.</p>) if figure["steps"].empty?

          rows = figure["steps"].map do |s|
            run = @doc["runs"][s["run"]]
            first = @doc["runs"][s["first"]]
            last = @doc["runs"][s["last"]]
            range = s["first"] == s["last"] ? "run #{s["run"] + 1}" : "runs #{s["first"] + 1}-#{s["last"] + 1}"
            state = if s["regression_id"]
                      "#{link("../regressions/#{s["regression_id"]}.html", "regression ##{s["regression_id"]}")} " \
                        "(#{esc(s["state"])}#{", fixed" if s["fixed_at"]})"
                    else
                      esc(s["state"] == "refuted" ? "refuted by the runs after it" : "#{s["state"]} (an improvement)")
                    end
            [esc(range), date(run["created_at"]), esc(first == last ? run["labels_text"] : "#{first["labels_text"]} … #{last["labels_text"]}"),
             change(figure["figure"], s["change"]), esc(s["interval"] ? "#{signed(s["interval"][0])} to #{signed(s["interval"][1])}" : ""),
             "#{value(figure["figure"], s["level_before"])} → #{value(figure["figure"], s["level_after"])}", esc(s["rule"]), state]
          end
          table(["where", "first run at the new level", "labels and revisions", "change", "95% interval", "level", "rule", "state"],
                rows, numbers: [false, false, false, true, true, true, false, false])
        end

        def runs_table
          rows = @doc["runs"].reverse.map do |run|
            cells = @doc["figures"].map do |f|
              point = f["points"][run["run"]]
              next esc(Units::NONE) unless point
              next %(<span class="failed">failed (#{esc(point["failed"])})</span>) unless point["median"]

              value(f["figure"], point["median"])
            end
            status = run["status"] == "failed" ? %(<span class="failed">failed: #{esc(run.dig("failure", "reason"))}</span>) : ""
            [esc(run["run"] + 1), date(run["created_at"]), esc(run["labels_text"]), *cells, status]
          end
          table(["run", "started", "labels and revisions", *@doc["figures"].map { |f| f["words"] }, ""], rows,
                numbers: [true, false, false, *@doc["figures"].map { true }, false])
        end
      end
    end
  end
end
