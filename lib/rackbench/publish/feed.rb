# frozen_string_literal: true

require "digest"
require "rss"

module Rackbench
  module Publish
    # regressions.xml: the Atom feed of the regressions (asv's name), one
    # entry per regression, newest change first. An entry's id is the
    # regression's own (urn:uuid, stored with it), so a regression is one
    # entry for its whole life: when its state or range changes, the
    # entry's <updated> does, and a feed reader shows it again as changed,
    # never as a second regression. Written with Ruby's rss library.
    module Feed
      # Entries in the feed: the regressions changed most recently.
      ENTRIES = 100

      module_function

      # The feed's XML. regressions :: [Regressions::Regression];
      # documents :: Documents (where each regression's series is);
      # settings :: Publish::Settings (title, url).
      def xml(regressions, documents, settings, out_dir)
        base = settings.url && "#{settings.url.chomp("/")}/"
        recent = regressions.sort_by { |r| [r.updated_at, r.id] }.reverse.first(ENTRIES)
        feed = RSS::Maker.make("atom") do |maker|
          maker.channel.id = base ? "#{base}regressions.xml" : feed_id(settings, out_dir)
          maker.channel.title = "#{settings.title}: regressions"
          maker.channel.updated = recent.first&.updated_at || Time.at(0).utc
          maker.channel.author = "rackbench publish"
          maker.channel.links.new_link { |l| l.href = "#{base}index.html"; l.rel = "alternate"; l.type = "text/html" }
          recent.each { |r| entry(maker, r, documents, base) }
        end
        feed.to_s
      end

      def entry(maker, regression, documents, base)
        summary = documents.regression_summary(regression)
        maker.items.new_item do |item|
          item.id = regression.uid
          item.title = title(regression, summary)
          item.updated = regression.updated_at
          item.published = regression.detected_at
          item.link = "#{base}regressions/#{regression.id}.html"
          item.summary = text(regression, summary)
          item.content.type = "html"
          item.content.content = html(regression, summary)
        end
      end

      # "#12 confirmed: requests/s −5.1% in ruby=3.4 (nightly)"
      def title(regression, summary)
        "##{regression.id} #{Regressions.words(regression.state)}: #{regression.figure_words} " \
          "#{Html.signed(regression.change)} in #{regression.config_label} (#{regression.experiment})"
      end

      def text(regression, summary)
        last = regression.events.last
        interval = regression.change_low ? " (95% interval #{Html.signed(regression.change_low)} to #{Html.signed(regression.change_high)})" : ""
        "#{regression.figure_words} #{Html.signed(regression.change)}#{interval} in #{regression.config_id}, " \
          "experiment #{regression.experiment}; commit range #{summary["range"]}; " \
          "#{Regressions.words(regression.state)} (#{regression.state_by}#{": #{last["note"]}" if last && last["note"]})."
      end

      def html(regression, summary)
        "<p>#{Html.esc(text(regression, summary))}</p>"
      end

      # Without --url: a name-based id from the title and the directory, the
      # same on every publish into it.
      def feed_id(settings, out_dir)
        hex = Digest::SHA1.hexdigest("rackbench-feed\0#{settings.title}\0#{File.expand_path(out_dir)}")
        "urn:uuid:#{hex[0, 8]}-#{hex[8, 4]}-5#{hex[13, 3]}-#{((hex[16, 2].to_i(16) & 0x3f) | 0x80).to_s(16)}#{hex[18, 2]}-#{hex[20, 12]}"
      end
    end
  end
end
