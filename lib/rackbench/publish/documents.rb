# frozen_string_literal: true

require "time"

module Rackbench
  module Publish
    # The site's raw JSON (doc/publish.md, "The site's JSON"): one document
    # per page, which the page is rendered from and which is written beside
    # it, so what a reader sees and what a script reads are the same
    # numbers. Pure functions of the Catalog and the stored regressions.
    class Documents
      FORMAT_VERSION = 1

      # catalog :: Publish::Catalog; regressions :: [Regressions::Regression]
      # settings :: Publish::Settings
      def initialize(catalog, regressions, settings)
        @catalog = catalog
        @settings = settings
        @regressions = regressions
        @by_series = regressions.group_by { |r| r.series }
        @testbed_of = catalog.testbeds.to_h { |t| [[t.name, t.machine_key], t] }
      end

      # The index: every testbed and every regression, in short. It says
      # when the latest run started rather than when it was published, so
      # that a publish with nothing new writes nothing.
      def index
        latest = @catalog.testbeds.map { |t| t.runs.last.created_at }.max
        { "format" => "rackbench-site", "format_version" => FORMAT_VERSION, "title" => @settings.title,
          "latest_run_at" => latest&.utc&.iso8601, "rackbench_version" => Rackbench::VERSION,
          "testbeds" => @catalog.testbeds.map { |t| testbed_summary(t) },
          "regressions" => @regressions.map { |r| regression_summary(r) } }
      end

      # A testbed: its runs, and per configuration each figure's latest
      # point, threshold and open regressions.
      def testbed(testbed)
        configs = testbed.series.group_by(&:config_id).map do |config_id, lines|
          { "id" => config_id, "label" => Publish.config_label(lines.first), "slug" => lines.first.config_slug,
            "dims" => lines.first.dims, "figures" => lines.map { |line| line_summary(line) } }
        end
        { "format" => "rackbench-testbed", "format_version" => FORMAT_VERSION, **testbed_head(testbed),
          "settings" => settings_h, "runs" => runs_h(testbed), "configs" => configs,
          "regressions" => regressions_of(testbed).map { |r| regression_summary(r) } }
      end

      # One configuration of a testbed: every figure's series, run by run,
      # with its steps and noise.
      def timeline(testbed, lines)
        first = lines.first
        { "format" => "rackbench-timeline", "format_version" => FORMAT_VERSION, "testbed" => testbed_head(testbed),
          "config" => { "id" => first.config_id, "label" => Publish.config_label(first), "slug" => first.config_slug,
                        "dims" => first.dims },
          "settings" => settings_h, "runs" => runs_h(testbed), "figures" => lines.map { |line| line_h(line) } }
      end

      # One run of a testbed: every point it has, with its batches' values
      # (what the comparison page reads).
      def run(testbed, run, points)
        labels = testbed.series.to_h { |l| [l.config_id, Publish.config_label(l)] }
        { "format" => "rackbench-run", "format_version" => FORMAT_VERSION, "testbed" => testbed.slug,
          **run.to_h, "points" => points.map { |p| p.to_h.merge("config_label" => labels[p.config_id]) } }
      end

      # A regression: its document (Regressions::Regression#to_h), where its
      # series is, and the runs around its range.
      def regression(regression)
        testbed = @testbed_of[[regression.experiment, regression.machine]]
        line = testbed&.series&.find { |l| l.key == regression.series }
        doc = { "format" => "rackbench-regression", "format_version" => FORMAT_VERSION, **regression.to_h }
        return doc.merge("testbed" => nil, "timeline" => nil) unless line

        doc.merge("testbed" => testbed_head(testbed), "timeline" => { "config_slug" => line.config_slug },
                  "window" => window(line, regression))
      end

      # The testbed and line of +regression+, or nil when its runs are no
      # longer published (a --where that leaves them out).
      def line_of(regression)
        testbed = @testbed_of[[regression.experiment, regression.machine]]
        testbed&.series&.find { |l| l.key == regression.series }
      end

      # Every regression in full, the site's regressions.json (asv's name).
      def regressions
        { "format" => "rackbench-regressions", "format_version" => FORMAT_VERSION,
          "regressions" => @regressions.map { |r| r.to_h.merge("testbed" => line_of(r)&.testbed&.slug) } }
      end

      def regression_summary(r)
        line = line_of(r)
        { "id" => r.id, "state" => r.state, "state_words" => Regressions.words(r.state), "experiment" => r.experiment,
          "testbed" => line&.testbed&.slug, "config_label" => r.config_label, "config_slug" => line&.config_slug,
          "figure" => r.figure, "figure_words" => r.figure_words, "change" => r.change,
          "range" => Publish.range_text(r.document["range"]), "detected_at" => Regressions.time(r.detected_at),
          "found_run_at" => r.document.dig("range", "found", "created_at"),
          "updated_at" => Regressions.time(r.updated_at) }
      end

      # The stored regressions of +testbed+'s series, newest first.
      def regressions_of(testbed)
        keys = testbed.series.map(&:key)
        keys.flat_map { |key| @by_series.fetch(key, []) }.sort_by { |r| -r.id }
      end

      private

      def settings_h
        { "confidence" => @settings.confidence, "min_batches" => @settings.min_batches,
          "equivalence" => @settings.equivalence, "instructions_equivalence" => @settings.instructions_equivalence,
          "default_threshold" => @settings.default_threshold, "order" => @settings.order }
      end

      def testbed_head(testbed)
        { "slug" => testbed.slug, "experiment" => testbed.name, "machine" => testbed.machine_text,
          "machine_key" => testbed.machine_key, "testbed" => testbed.testbed }
      end

      def testbed_summary(testbed)
        runs = testbed.runs
        head = testbed_head(testbed)
        head.merge("runs" => runs.size, "failed_runs" => runs.count { |r| r.status == "failed" },
                   "first_run_at" => runs.first.created_at.utc.iso8601, "last_run_at" => runs.last.created_at.utc.iso8601,
                   "last_labels" => runs.last.labels.text, "configs" => testbed.series.map(&:config_id).uniq.size,
                   "series" => testbed.series.size,
                   "open_regressions" => regressions_of(testbed).count(&:open?))
      end

      def runs_h(testbed)
        testbed.runs.each_with_index.map do |run, i|
          run.to_h.merge("run" => i, "changes" => i.zero? ? [] : run.labels.changes_from(testbed.runs[i - 1].labels))
        end
      end

      def figure_h(figure)
        { "figure" => figure.name, "words" => figure.words, "better" => figure.better.to_s, "unit" => figure.unit.to_s }
      end

      def noise_h(noise)
        { "rule" => noise.rule, "sigma" => noise.sigma, "pairs" => noise.pairs, "threshold" => noise.threshold,
          "z" => noise.z }
      end

      def line_summary(line)
        valued = line.points.each_index.select { |i| line.points[i]&.median }
        latest = valued.last
        previous = valued[-2]
        change = previous && line.points[latest].median / line.points[previous].median - 1
        figure_h(line.figure).merge(
          "latest" => { "run" => latest, "median" => line.points[latest].median, "ci" => line.points[latest].ci },
          "change_from_previous" => change, "noise" => noise_h(line.noise),
          "steps" => line.steps.count { |s| s.state != "refuted" },
          "open_regressions" => @by_series.fetch(line.key, []).select(&:open?).map(&:id)
        )
      end

      def line_h(line)
        regressions = @by_series.fetch(line.key, []).to_h { |r| [r.detected_experiment_id, r.id] }
        runs = line.testbed.runs
        figure_h(line.figure).merge(
          "equivalence" => @settings.equivalence_of(line.figure), "worse" => line.worse,
          "points" => line.points.map { |p| p && { "median" => p.median, "ci" => p.ci, "batches" => p.batches, "failed" => p.failed } },
          "noise" => noise_h(line.noise),
          "steps" => line.steps.map do |s|
            { "run" => s.index, "first" => s.first, "last" => s.last, "found_at" => s.found_at, "direction" => s.direction,
              "worse" => s.direction == line.worse, "change" => s.change, "interval" => s.interval,
              "level_before" => s.level_before, "level_after" => s.level_after, "rule" => s.rule, "state" => s.state,
              "resolved_at" => s.resolved_at, "fixed_at" => s.fixed_at,
              "regression_id" => regressions[runs[s.found_at].id] }
          end
        )
      end

      # The runs of +line+ from 20 before the regression's range to 20
      # after: what its page draws.
      def window(line, regression)
        runs = line.testbed.runs
        ids = runs.map(&:id)
        first = ids.index(regression.good_experiment_id || regression.step_experiment_id) || 0
        last = ids.index(regression.bad_experiment_id) || runs.size - 1
        from = [first - 20, 0].max
        to = [last + 20, runs.size - 1].min
        full = line_h(line)
        full.merge("from" => from, "to" => to, "runs" => runs_h(line.testbed)[from..to], "points" => full["points"][from..to],
                   "steps" => full["steps"].select { |s| s["first"] <= to && s["last"] >= from })
      end
    end

    # "app myapp 9c8d7e6f5a..3f2a1b0c9d" for a regression's range document
    # (Regressions::Tracker): the revisions that moved across it, or the
    # experiment ids when nothing is labelled with a revision.
    def self.range_text(range)
      return "" unless range

      moved = Array(range["revisions"]).map do |r|
        "#{r["of"]} #{r["name"]} #{r["good"] ? r["good"][0, Labels::SHORT_COMMIT] : "(none)"}..#{r["bad"][0, Labels::SHORT_COMMIT]}"
      end
      return moved.join(", ") unless moved.empty?

      good = range["good"] ? "experiment id #{range["good"]["experiment_id"]}" : "the first run"
      "#{good}..experiment id #{range["bad"]["experiment_id"]}"
    end
  end
end
