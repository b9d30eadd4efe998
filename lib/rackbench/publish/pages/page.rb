# frozen_string_literal: true

module Rackbench
  module Publish
    # One class per page kind of the site, each rendering one document of
    # Documents into HTML inside the Frame.
    module Pages
      # What every page is made of: its document, the site's title (the
      # index's and the regressions' are in their document), Html's helpers.
      class Page
        include Html

        # doc :: the page's document (Documents); site_title :: the site's title
        def initialize(doc, site_title = nil)
          @doc = doc
          @site_title = site_title || doc["title"]
        end
      end
    end
  end
end
