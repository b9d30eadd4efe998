# frozen_string_literal: true

require "json"
require_relative "html_report/escape"
require_relative "html_report/document"
require_relative "html_report/assets"
require_relative "html_report/charts"
require_relative "html_report/tables"
require_relative "html_report/profile_section"
require_relative "html_report/style"
require_relative "html_report/scripts"
require_relative "html_report/inside_section"
require_relative "html_report/instructions_section"
require_relative "html_report/diffs_section"
require_relative "html_report/cycles_section"
require_relative "html_report/hosts_section"
require_relative "html_report/page"
require_relative "html_report/frame"

module Rackbench
  # The report as one self-contained HTML file: charts drawn by Vega-Lite
  # (its JavaScript inlined from the vega gem), tables, the experiment file
  # and the machine's environment. It opens offline and makes no network
  # request of any kind (a Content-Security-Policy forbids them). doc/report.md
  # describes what it shows.
  #
  #   Rackbench::HtmlReport.new(report.to_h).write("results/report.html")
  class HtmlReport
    # document :: the report document (Report#to_h, or the JSON of
    #             `rackbench report --json` parsed): "rackbench-report"
    #             format_version 2. Raises Error for anything else.
    # :profile_html :: the inside section's profile hook: a Proc given a
    #                  configuration entry of the document, returning the
    #                  HTML of its profile or nil (HtmlReport::InsideSection)
    #                  (default: nil, no profiles)
    def initialize(document, profile_html: nil)
      @doc = Document.new(document)
      @profile_html = profile_html
    end

    # The whole page, as a String (UTF-8). Raises Error when the vega gem
    # is missing.
    def render
      scripts = Assets.scripts
      Page.new(@doc, scripts: scripts, libraries: libraries_text(scripts), profile_html: @profile_html).render
    end

    # Writes the page to +path+ atomically (a temporary file in the same
    # directory, then a rename), so a reader never sees half a report.
    # Returns +path+.
    def write(path)
      Frame.write(path, render, what: "the HTML report")
    end

    private

    # "Vega 5.30.0, Vega-Lite 5.21.0 and vega-embed 6.26.0 (vega gem 0.4.0)",
    # versions read from the libraries themselves.
    def libraries_text(scripts)
      versions = scripts.to_h.transform_values { |source| source[/\bversion(?:\$\d+)? = "(\d+\.\d+\.\d+)"/, 1] }
      names = { "vega.js" => "Vega", "vega-lite.js" => "Vega-Lite", "vega-embed.js" => "vega-embed" }
      parts = versions.map { |file, version| [names.fetch(file, file), version].compact.join(" ") }
      "#{parts[0...-1].join(", ")} and #{parts.last} (vega gem #{Assets.version})"
    end
  end
end
