# frozen_string_literal: true

require "digest"

module Rackbench
  class HtmlReport
    # A configuration's profile on the page: what was sampled, the top
    # frames by self and by total time, and the flame graph
    # (Charts::Flame). Self-contained: a caller puts the HTML where it
    # wants (the page's Profiles section, a per-configuration section); the
    # page's render script draws every [data-chart] it finds.
    module ProfileSection
      TOP_ROWS = 10

      module_function

      # HTML for profile, one entry of the report document's "profiles"
      # (Report::Profiles#to_a). :id :: the element ids' stem, unique on
      # the page (default: from the configuration's id).
      # :title :: the heading (default: the configuration's id)
      def render(profile, id: nil, title: nil)
        stem = id || "profile-#{Digest::SHA256.hexdigest(profile["config_id"].to_s)[0, 10]}"
        spec = Charts::Flame.spec(profile)
        chart = if spec
                  Charts.embed(stem, spec)
                else
                  %(<p class="empty">No samples.</p>)
                end
        <<~HTML.chomp
          <div class="profile" id="#{stem}">
          <h3>#{esc(title || profile["config_id"])}</h3>
          <p class="how">#{esc(summary(profile))}</p>
          #{chart}
          #{table("Top frames by self", profile["top_self"])}
          #{table("Top frames by total", profile["top_total"])}
          </div>
        HTML
      end

      def summary(profile)
        every = profile["mode"] == "object" ? "every #{profile["interval"]} allocation(s)" : "every #{profile["interval"]} µs"
        trials = Array(profile["trials"]).size
        "#{profile["tool"]} #{profile["mode"]} mode, #{every}: #{profile["samples"]} samples from " \
          "#{profile["processes"]} process(es) in #{trials} profiled trial#{"s" if trials != 1}, merged. " \
          "Each bar is a frame, as wide as the samples with it on the stack, its callees below it; " \
          "hover for figures. Self: samples with the frame at the top of the stack."
      end

      def table(caption, rows)
        body = Array(rows).first(TOP_ROWS).map do |row|
          where = row["file"].to_s.empty? ? "" : "#{row["file"]}#{":#{row["line"]}" if row["line"]}"
          "<tr><td class=\"num\">#{format("%.1f%%", row["self_share"] * 100)}</td>" \
            "<td class=\"num\">#{format("%.1f%%", row["total_share"] * 100)}</td>" \
            "<td>#{esc(row["name"])}</td><td class=\"file\">#{esc(where)}</td></tr>"
        end
        <<~HTML.chomp
          <table class="top-frames">
          <caption>#{esc(caption)}</caption>
          <thead><tr><th>self</th><th>total</th><th>frame</th><th>file</th></tr></thead>
          <tbody>#{body.join}</tbody>
          </table>
        HTML
      end

      def esc(value)
        Escape.html(value)
      end
    end
  end
end
