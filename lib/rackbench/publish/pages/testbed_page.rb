# frozen_string_literal: true

module Rackbench
  module Publish
    module Pages
      # SLUG/index.html: one experiment on one machine. Each
      # configuration's figures as they stand (the latest run, its change
      # from the run before, the series' threshold, its open regressions),
      # the testbed's regressions, and its runs, newest first, each linked
      # to a comparison with the one before.
      class TestbedPage < Page # of Documents#testbed

        def render
          failed = @doc["runs"].count { |r| r["status"] == "failed" }
          Frame.html(title: "#{@doc["experiment"]} on #{@doc["testbed"] || @doc["machine"]}", depth: 1,
                     site_title: @site_title, data: "../data/#{@doc["slug"]}/testbed.json", body: <<~BODY)
                       <header><h1>#{esc(@doc["experiment"])}</h1>
                       <p class="meta">#{esc(@doc["testbed"] ? "testbed #{@doc["testbed"]}: " : "")}#{esc(@doc["machine"])};
                       #{@doc["runs"].size} runs#{failed.positive? ? %(, <span class="failed">#{failed} failed</span>) : ""}
                       · <a href="compare.html">compare any two runs</a></p>
                       <p class="how">Each row is a configuration's figure in the latest run that measured it: its
                       median over the batches with its #{esc(Units.percent_trimmed(@doc["settings"]["confidence"]))}
                       interval, its change from the run before, and the smallest step the series flags from one run
                       (learned from its own noise once it has 10 pairs of neighbouring runs; the gate's default before).
                       Click a configuration for its timelines.</p></header>
                       <section><h2>Configurations</h2>
                       #{configs}
                       </section>
                       <section><h2>Regressions</h2>
                       #{@doc["regressions"].empty? ? %(<p class="empty">None.</p>) : RegressionsPage.table(@doc["regressions"], depth: 1)}
                       </section>
                       <section><h2>Runs</h2>
                       #{runs}
                       </section>
                     BODY
        end

        private

        def configs
          rows = @doc["configs"].flat_map do |config|
            config["figures"].map do |f|
              latest = f["latest"]
              open = f["open_regressions"].map { |id| link("../regressions/#{id}.html", "##{id}") }.join(" ")
              [link("#{config["slug"]}.html", config["label"]), esc(f["words"]), value(f["figure"], latest["median"]),
               interval(f["figure"], latest["ci"]), change(f["figure"], f["change_from_previous"]),
               esc(pct(f["noise"]["threshold"])), esc(f["noise"]["rule"]), esc(f["steps"]), open]
            end
          end
          table(["configuration", "figure", "latest", "interval", "from the run before", "threshold", "learned or default",
                 "steps", "open regressions"], rows,
                numbers: [false, false, true, true, true, true, false, true, false])
        end

        def runs
          list = @doc["runs"].reverse
          rows = list.map do |run|
            previous = run["run"].positive? ? @doc["runs"][run["run"] - 1] : nil
            status = case run["status"]
                     when "failed" then %(<span class="failed">failed: #{esc(run.dig("failure", "reason"))}</span>)
                     else run["pruned"] ? "measured (raw data pruned)" : "measured"
                     end
            compare = previous ? link("compare.html#a=#{previous["experiment_id"]}&b=#{run["experiment_id"]}", "against the one before") : ""
            [esc(run["run"] + 1), date(run["created_at"]), esc(run["experiment_id"]), esc(run["labels_text"]), status,
             esc(run["changes"].join("; ")), compare]
          end
          table(["run", "started", "experiment id", "labels and revisions", "status", "changed since the run before", ""],
                rows, numbers: [true, false, true, false, false, false, false])
        end
      end
    end
  end
end
