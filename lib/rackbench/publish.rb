# frozen_string_literal: true

require_relative "errors"

module Rackbench
  # `rackbench publish`: a static site of every run in a store, written
  # from the store alone, served by any web server or opened from disk
  # (doc/publish.md). One pass:
  #
  # 1. Points: each run not summarised yet (or changed since) is read once
  #    and its figures kept in the store (Publish::Points);
  # 2. Catalog: the runs as testbeds (one experiment on one machine), each
  #    configuration's figure a series, and the steps in it
  #    (Stats::StepDetection: thresholds learned from the series' own
  #    noise);
  # 3. Regressions: the steps in the worse direction stored, once, and
  #    their states moved as the runs say (Regressions::Tracker);
  # 4. Site: the pages, the feed and the raw JSON, each file written only
  #    when what it shows changed (Publish::Site);
  # 5. Announcements: each new regression given to --on-regression's
  #    command once (Publish::Hook).
  #
  #   outcome = Rackbench::Publish.run(store, out: "site", settings: Publish::Settings.new)
  #   outcome.written # => files written this time
  module Publish
    # What a publish did, for the command's summary and --json.
    Outcome = Struct.new(:summarised, :testbeds, :lines, :created, :changed, :written, :removed, :unchanged,
                         :announced, :announce_failures, :site, keyword_init: true) do
      def to_h = super.transform_keys(&:to_s)
    end

    module_function

    # Publishes +store+ (an open Store) into the directory +out+.
    # :settings :: Publish::Settings
    # :hook :: a Publish::Hook run once per new regression (default: nil)
    # :progress :: called with a line of progress (default: nil)
    def run(store, out:, settings: Settings.new, hook: nil, progress: nil)
      points = Points.new(store, settings)
      summarised = points.refresh(progress: progress && ->(done, total) { progress.call("summarised run #{done} of #{total}") if done == total || (done % 50).zero? })
      catalog = Catalog.new(store, points, settings)
      regressions = Regressions.new(store)
      tracked = Regressions::Tracker.new(regressions, catalog).reconcile
      all = regressions.all
      site = Site.new(out, settings).write(catalog, all)
      announced, failures = hook ? hook.announce(regressions, all) : [[], []]
      Outcome.new(summarised: summarised, testbeds: catalog.testbeds.size, lines: catalog.lines.size,
                  created: tracked.created, changed: tracked.changed, written: site.written, removed: site.removed,
                  unchanged: site.unchanged, announced: announced, announce_failures: failures, site: site.root)
    end

    # How a line's configuration is named on the site: the dimensions that
    # vary among its testbed's configurations ("ruby=3.4 threads=4"), or
    # its whole id when none varies.
    def config_label(line)
      varying = line.testbed.varying_dimensions
      return line.config_id if varying.empty?

      varying.map { |name| "#{name}=#{Report.format_dim(line.dims[name])}" }.join(" ")
    end
  end
end

require_relative "publish/settings"
require_relative "publish/points"
require_relative "publish/catalog"
require_relative "publish/documents"
require_relative "publish/timeline_chart"
require_relative "publish/frame"
require_relative "publish/site_script"
require_relative "publish/pages/page"
require_relative "publish/pages/index_page"
require_relative "publish/pages/regressions_page"
require_relative "publish/pages/testbed_page"
require_relative "publish/pages/timeline_page"
require_relative "publish/pages/regression_page"
require_relative "publish/pages/compare_page"
require_relative "publish/feed"
require_relative "publish/site"
require_relative "publish/hook"
require_relative "publish/retention"
require_relative "publish/failed_run"
require_relative "regressions"
