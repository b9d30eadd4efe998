# frozen_string_literal: true

require "json"
require_relative "../../bisect"

module Rackbench
  module Publish
    module Pages
      # regressions/ID.html: one regression. Its state and every change of
      # it, its size with its interval, the range of commits (the last good
      # run, the runs the step may lie in, the revisions that moved: what
      # to bisect), the series around it, a bisect's result once one is
      # attached, and the commands that act on it.
      class RegressionPage < Page # of Documents#regression

        def render
          title = "Regression ##{@doc["id"]}: #{@doc["figure_words"]} #{signed(@doc["change"])} in #{@doc["config_label"]}"
          Frame.html(title: title, depth: 1, site_title: @site_title, charts: !chart.nil?,
                     data: "../data/regressions/#{@doc["id"]}.json", body: <<~BODY)
                       <header><h1>#{esc(title)}</h1>
                       <p class="meta">#{state(@doc["state"])} #{where} · found in the run of
                       #{date(@doc.dig("range", "found", "created_at") || @doc["detected_at"])} (stored
                       #{date(@doc["detected_at"])})</p></header>
                       <section><h2>What changed</h2>
                       <dl class="settings">
                       <dt>change</dt><dd>#{change(@doc["figure"], @doc["change"])}#{interval_text}</dd>
                       <dt>level</dt><dd>#{value(@doc["figure"], @doc["level_before"])} → #{value(@doc["figure"], @doc["level_after"])}</dd>
                       <dt>threshold</dt><dd>#{esc(pct(@doc["threshold"]))} from one run (#{esc(@doc["rule"])} rule)</dd>
                       <dt>configuration</dt><dd>#{esc(@doc["config_id"])}</dd>
                       #{range}
                       </dl>
                       </section>
                       <section><h2>The series around it</h2>
                       #{chart ? HtmlReport::Charts.embed("regression", chart) : %(<p class="empty">Its runs are no longer published.</p>)}
                       #{links}
                       </section>
                       #{bisect}
                       <section><h2>State</h2>
                       #{events}
                       <p class="how">Set it: <code>rackbench regressions set #{esc(@doc["id"])} confirmed|fixed|false-positive|accepted --note TEXT</code>.
                       publish moves a state it set itself as the runs say, never one a person set, except that a later
                       step back marks a confirmed or accepted regression fixed.</p>
                       </section>
                     BODY
        end

        private

        def where
          return esc(@doc["experiment"]) unless @doc["testbed"]

          testbed = @doc["testbed"]
          "#{link("../#{testbed["slug"]}/index.html", testbed["experiment"])} on " \
            "#{esc(testbed["testbed"] ? "testbed #{testbed["testbed"]}" : testbed["machine"])}"
        end

        def interval_text
          pair = @doc["change_interval"]
          pair ? " (95% interval #{esc(signed(pair[0]))} to #{esc(signed(pair[1]))})" : ""
        end

        def range
          r = @doc["range"] || {}
          good = r["good"] ? run_text(r["good"]) : "none (the first run)"
          spans = r["runs"].to_i > 1 ? "#{r["runs"]} runs, from #{run_text(r["first"])} to #{run_text(r["bad"])}" : run_text(r["bad"])
          moved = Array(r["revisions"]).map do |rev|
            "#{rev["of"]} #{rev["name"]}: #{rev["good"] || "(none)"}..#{rev["bad"]}"
          end
          <<~HTML.chomp
            <dt>last good run</dt><dd>#{esc(good)}</dd>
            <dt>the step may be at</dt><dd>#{esc(spans)}</dd>
            <dt>commit range</dt><dd>#{moved.empty? ? esc("no revision labelled") : moved.map { |m| "<code>#{esc(m)}</code>" }.join("<br>")}</dd>
            <dt>what changed</dt><dd>#{esc(Array(r["changes"]).join("; "))}</dd>
          HTML
        end

        def run_text(run)
          "experiment id #{run["experiment_id"]}, #{run["created_at"].to_s.sub("T", " ")}#{", #{run["labels_text"]}" unless run["labels_text"].to_s.empty?}"
        end

        def chart
          return @chart if defined?(@chart)

          window = @doc["window"]
          return @chart = nil unless window

          index = window["runs"].to_h { |run| [run["experiment_id"], run["run"]] }
          highlight = [index[@doc.dig("runs", "good")] || window["from"], index[@doc.dig("runs", "bad")]]
          @chart = TimelineChart.spec(window, window["runs"], by_date: true, highlight: highlight.all? ? highlight : nil)
        end

        def links
          runs = @doc["runs"]
          parts = []
          parts << link("../#{@doc["testbed"]["slug"]}/#{@doc["timeline"]["config_slug"]}.html#{"##{@doc["figure"]}"}", "the whole timeline") if @doc["timeline"]
          if @doc["testbed"] && runs["good"]
            parts << link("../#{@doc["testbed"]["slug"]}/compare.html#a=#{runs["good"]}&b=#{runs["bad"]}",
                          "compare the last good run with the last run of the range")
          end
          parts.empty? ? "" : "<p>#{parts.join(" · ")}</p>"
        end

        def bisect
          return "" unless @doc["bisect"]

          json = "<pre>#{esc(JSON.pretty_generate(@doc["bisect"]))}</pre>"
          lines = Bisect::Summary.lines(@doc["bisect"])
          return "<section><h2>Bisect</h2>\n#{json}\n</section>" unless lines

          items = lines.drop(1).map { |line| "<li>#{esc(line)}</li>" }.join
          "<section><h2>Bisect</h2>\n<p>#{esc(lines.first)}</p>\n#{"<ul>#{items}</ul>\n" unless items.empty?}" \
            "<details><summary>The bisect document</summary>#{json}</details>\n</section>"
        end

        def events
          rows = Array(@doc["events"]).map do |e|
            [date(e["at"]), esc(e["event"]), state(e["state"]), esc(e["by"]), esc(e["note"])]
          end
          table(%w[when what state by note], rows)
        end
      end
    end
  end
end
