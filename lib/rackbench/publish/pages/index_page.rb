# frozen_string_literal: true

module Rackbench
  module Publish
    module Pages
      # index.html: the open regressions first, then every testbed (an
      # experiment on one machine) with its runs and links to its
      # timelines and comparison, then the regressions lately closed.
      class IndexPage < Page # of Documents#index

        def render
          open = @doc["regressions"].select { |r| Regressions::OPEN.include?(r["state"]) }
          closed = @doc["regressions"].reject { |r| Regressions::OPEN.include?(r["state"]) }
                                      .sort_by { |r| r["updated_at"].to_s }.reverse.first(20)
          runs = @doc["testbeds"].sum { |t| t["runs"] }
          Frame.html(title: @doc["title"], depth: 0, site_title: @doc["title"], data: "data/index.json", body: <<~BODY)
            <header><h1>#{esc(@doc["title"])}</h1>
            <p class="meta">#{@doc["testbeds"].size} testbed#{"s" unless @doc["testbeds"].size == 1}, #{runs} run#{"s" unless runs == 1},
            #{open.size} open regression#{"s" unless open.size == 1}. Latest run #{date(@doc["latest_run_at"])}.</p>
            <p class="how">A testbed is one experiment on one machine (or one --label testbed): only its own runs make a
            series. Every configuration's figures are drawn run by run with their intervals; a step found in a series
            is a regression when it made the figure worse, tracked until it is fixed (doc/publish.md).</p></header>
            <section><h2>Open regressions</h2>
            #{open.empty? ? %(<p class="empty">None.</p>) : RegressionsPage.table(open, depth: 0)}
            </section>
            <section><h2>Testbeds</h2>
            #{testbeds}
            </section>
            <section><h2>Regressions lately closed</h2>
            #{closed.empty? ? %(<p class="empty">None.</p>) : RegressionsPage.table(closed, depth: 0)}
            <p><a href="regressions/index.html">Every regression</a> · <a href="regressions.xml">Atom feed</a> ·
            <a href="regressions.json">regressions.json</a></p>
            </section>
          BODY
        end

        private

        def testbeds
          return %(<p class="empty">No run to show yet.</p>) if @doc["testbeds"].empty?

          rows = @doc["testbeds"].map do |t|
            failed = t["failed_runs"].positive? ? %( <span class="failed">(#{t["failed_runs"]} failed)</span>) : ""
            [link("#{t["slug"]}/index.html", t["experiment"]), esc(t["testbed"] ? "testbed #{t["testbed"]}" : t["machine"]),
             "#{t["runs"]}#{failed}", date(t["first_run_at"]), date(t["last_run_at"]), esc(t["last_labels"]),
             esc(t["configs"]), t["open_regressions"].positive? ? %(<span class="worse">#{t["open_regressions"]}</span>) : "0",
             link("#{t["slug"]}/compare.html", "compare two runs")]
          end
          table(["experiment", "machine", "runs", "first run", "latest run", "latest labels and revisions",
                 "configurations", "open regressions", ""], rows,
                numbers: [false, false, true, false, false, false, true, true, false])
        end
      end
    end
  end
end
