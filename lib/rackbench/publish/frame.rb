# frozen_string_literal: true

module Rackbench
  module Publish
    # What every page of the site shares: the head (a Content-Security-
    # Policy that allows the site's own files and nothing else, the
    # report's error collector), the navigation, the footer, and the
    # scripts: Vega's (from assets/, written once per site rather than
    # inlined into every page: 2 MB each) where the page has charts, and
    # the site's own (SiteScript) on every page.
    module Frame
      # Nothing from the network: scripts, styles and images of the site's
      # own origin only (file:// included), no request of any other kind.
      CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self' 'unsafe-inline'; " \
                                "style-src 'self' 'unsafe-inline'; img-src 'self' data:"

      module_function

      # The page. +depth+: how many directories below the site's root it
      # is (its links are relative, so the site works from any URL or
      # from disk). +charts+: whether it loads Vega.
      def html(title:, body:, depth:, site_title:, charts: false, data: nil)
        root = "../" * depth
        libraries = charts ? HtmlReport::Assets::FILES.map { |name| %(<script src="#{root}assets/#{name}"></script>) } : []
        data_link = data ? %( · <a href="#{Html.esc(data)}">this page's data (JSON)</a>) : ""
        <<~HTML
          <!DOCTYPE html>
          <html lang="en">
          <head>
          <meta charset="utf-8">
          <meta http-equiv="Content-Security-Policy" content="#{CONTENT_SECURITY_POLICY}">
          <meta name="viewport" content="width=device-width, initial-scale=1">
          <meta name="referrer" content="no-referrer">
          <title>#{Html.esc(title)}</title>
          <link rel="stylesheet" href="#{root}assets/site.css">
          <link rel="alternate" type="application/atom+xml" title="Regressions" href="#{root}regressions.xml">
          <script>
          #{HtmlReport::Escape.script_source(HtmlReport::Scripts::ERROR_COLLECTOR)}</script>
          </head>
          <body>
          <nav><a href="#{root}index.html">#{Html.esc(site_title)}</a><a href="#{root}regressions/index.html">regressions</a><a href="#{root}regressions.xml">feed</a></nav>
          #{body}
          <footer>Published by rackbench #{Html.esc(Rackbench::VERSION)} from its results store; a static site with no
          server of its own and no request beyond its own files. Charts drawn by Vega-Lite#{data_link}.</footer>
          #{libraries.join("\n")}
          <script src="#{root}assets/site.js"></script>
          </body>
          </html>
        HTML
      end

      # The stylesheet: the report's, and the site's own few rules.
      def stylesheet
        HtmlReport::STYLE + <<~CSS
          .state { display: inline-block; padding: 0 6px; border-radius: 4px; font-size: 12px; color: #fff; white-space: nowrap; }
          .state-detected { background: #d1453b; } .state-confirmed { background: #8e1e16; }
          .state-fixed { background: #2e9e44; } .state-false_positive { background: #8c8c8c; }
          .state-accepted { background: #b07aa1; }
          .worse { color: #b3261e; } .better { color: #1e7b34; } .failed { color: #b3261e; font-weight: 600; }
          .tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 10px; }
          .tile { border: 1px solid var(--rule); border-radius: 6px; padding: 8px 12px; }
          .tile h3 { font-size: 14px; margin: 0 0 4px; }
          select { font: inherit; max-width: 100%; }
          .compare-pick { display: grid; grid-template-columns: max-content 1fr; gap: 6px 12px; align-items: center; margin: 12px 0; }
        CSS
      end
    end

    # Small helpers of the pages: escaping, links, figures in words.
    module Html
      module_function

      def esc(value) = HtmlReport::Escape.html(value)

      def link(href, text) = %(<a href="#{esc(href)}">#{esc(text)}</a>)

      def table(headings, rows, numbers: nil)
        HtmlReport::Tables.table(headings, rows, numbers: numbers || headings.map { false })
      end

      # A figure's value as the reports write it ("1,204 req/s" style).
      def value(figure_name, value) = esc(Report::BatchFigures.fetch(figure_name).format(value))

      def interval(figure_name, pair)
        return esc(Units::NONE) unless pair

        "#{value(figure_name, pair[0])}–#{value(figure_name, pair[1])}"
      end

      # -0.051 => "−5.1%", classed worse or better for +figure_name+.
      def change(figure_name, fraction)
        return esc(Units::NONE) if fraction.nil?

        better = Report::BatchFigures.fetch(figure_name).better == :higher
        css = fraction.zero? ? "" : ((fraction.positive? == better) ? "better" : "worse")
        %(<span class="#{css}">#{esc(signed(fraction))}</span>)
      end

      def signed(fraction)
        sign = fraction.negative? ? Gate::Markdown::MINUS : "+"
        digits = fraction.abs < 0.01 ? 2 : 1
        "#{sign}#{format("%.#{digits}f", fraction.abs * 100)}%"
      end

      # A fraction as a percentage with the digits its size needs:
      # 0.0004 => "0.040%", 0.012 => "1.20%", 0.2 => "20.0%".
      def pct(fraction)
        return Units::NONE if fraction.nil?

        digits = fraction.abs < 0.001 ? 3 : (fraction.abs < 0.1 ? 2 : 1)
        format("%.#{digits}f%%", fraction * 100)
      end

      def state(state) = %(<span class="state state-#{esc(state)}">#{esc(Regressions.words(state))}</span>)

      def date(iso) = esc(iso.to_s.sub("T", " ").sub(/:\d\dZ\z/, " UTC"))

      # What a series knows of its noise, in a sentence.
      def threshold(noise, default_threshold)
        if noise["rule"] == "learned"
          "run-to-run noise #{pct(noise["sigma"])} (learned from #{noise["pairs"]} pairs of neighbouring " \
            "runs); a step of #{pct(noise["threshold"])} is flagged from one run, smaller ones once " \
            "enough runs agree (#{format("%.1f", noise["z"])} standard errors)"
        else
          "the gate's default, #{Units.percent_trimmed(default_threshold)}, with the run's interval outside the band " \
            "of the runs before it (#{noise["pairs"]} pairs of neighbouring runs so far; the series learns its own " \
            "noise from 10)"
        end
      end
    end
  end
end
