# frozen_string_literal: true

require "digest"
require "fileutils"
require "json"

module Rackbench
  module Publish
    # Writes the site into a directory, incrementally: every file is made
    # from a document (the page's JSON, an asset's name and version), and
    # its digest is kept in the directory's manifest; a file whose digest
    # did not change is left as it is, neither rendered nor written. So
    # after one new run only the pages that show it are written again (its
    # testbed's pages, the timelines of its configurations, its own data,
    # the index), and a publish with nothing new writes nothing. Files the
    # site no longer has (a regression's page never goes; a testbed left
    # out by --where does) are removed. Every file is written to a
    # temporary name and renamed, so a web server never serves half a page.
    class Site
      MANIFEST = ".rackbench-site.json"
      LOCK = ".rackbench-site.lock"

      # The code that makes the pages (lib/rackbench/publish/ and the
      # report's style and escaping it shares), digested: another rackbench,
      # or an edited one, writes every page again.
      def self.code_digest
        @code_digest ||= begin
          lib = File.expand_path("..", __dir__)
          files = Dir[File.join(lib, "publish", "**", "*.rb")] + %w[regressions.rb html_report/style.rb html_report/escape.rb
                                                                   html_report/scripts.rb].map { |f| File.join(lib, f) }
          Digest::SHA256.hexdigest(files.sort.map { |f| File.read(f) }.join("\0"))
        end
      end

      # What a write did: the site's directory and the files written,
      # removed and left as they were (paths relative to it).
      Result = Struct.new(:root, :written, :removed, :unchanged, keyword_init: true)

      def initialize(out, settings)
        @root = File.expand_path(out)
        @settings = settings
      end

      # Writes the site of +catalog+ and +regressions+ ([Regressions::Regression]).
      # Raises Error for a directory that holds other files and no site.
      def write(catalog, regressions)
        refuse_foreign_directory
        lock
        previous = manifest
        docs = Documents.new(catalog, regressions, @settings)
        @plan = {}
        assets
        index(docs)
        catalog.testbeds.each { |testbed| testbed_files(docs, testbed) }
        regressions.each { |r| regression_files(docs, r) }
        all = regressions.map(&:to_h)
        plan("regressions.json", all) { json(docs.regressions) }
        plan("regressions.xml", all) { Feed.xml(regressions, docs, @settings, @root) }
        apply(previous)
      end

      private

      # The file at +path+ is made by the block when +key+ (small JSON-able
      # data naming everything its content depends on) changed.
      def plan(path, key, &make)
        @plan[path] = [Digest::SHA256.hexdigest(JSON.generate([Site.code_digest, Rackbench::VERSION, settings_key, key])), make]
      end

      def settings_key
        @settings_key ||= @settings.to_h.merge(figures: @settings.figures.map(&:name))
      end

      # A document built once, for the JSON file and the page made of it.
      def memo(&build)
        value = nil
        -> { value ||= build.call }
      end

      def assets
        version = HtmlReport::Assets.version
        HtmlReport::Assets::FILES.each do |name|
          plan("assets/#{name}", ["vega", version, name]) { File.read(File.join(HtmlReport::Assets.directory, name)) }
        end
        plan("assets/site.js", SITE_SCRIPT) { SITE_SCRIPT }
        plan("assets/site.css", Frame.stylesheet) { Frame.stylesheet }
      end

      def index(docs)
        doc = docs.index
        plan("data/index.json", doc) { json(doc) }
        plan("index.html", doc) { Pages::IndexPage.new(doc).render }
        plan("regressions/index.html", doc) { Pages::RegressionsPage.new(doc).render }
      end

      def testbed_files(docs, testbed)
        slug = testbed.slug
        regressions = docs.regressions_of(testbed).map { |r| [r.id, r.state, r.updated_at.to_f, r.change] }
        key = [testbed.runs_key, testbed.series.map(&:key_parts), regressions, testbed.varying_dimensions]
        doc = memo { docs.testbed(testbed) }
        plan("data/#{slug}/testbed.json", key) { json(doc.call) }
        plan("#{slug}/index.html", key) { Pages::TestbedPage.new(doc.call, @settings.title).render }
        plan("#{slug}/compare.html", key) { Pages::ComparePage.new(doc.call, @settings.title).render }
        testbed.series.group_by(&:config_id).each_value do |lines|
          config = lines.first.config_slug
          key = [testbed.runs_key, lines.map(&:key_parts), regressions, testbed.varying_dimensions]
          timeline = memo { docs.timeline(testbed, lines) }
          plan("data/#{slug}/#{config}.json", key) { json(timeline.call) }
          plan("#{slug}/#{config}.html", key) { Pages::TimelinePage.new(timeline.call, @settings.title).render }
        end
        testbed.runs.each_with_index { |run, i| run_files(docs, testbed, run, i) }
      end

      def run_files(docs, testbed, run, index)
        points = testbed.series.filter_map { |line| line.points[index] }
        return if points.empty? && run.status != "failed"

        path = "data/#{testbed.slug}/runs/#{run.id}"
        key = [testbed.slug, run.key, testbed.varying_dimensions]
        doc = memo { docs.run(testbed, run, points) }
        plan("#{path}.json", key) { json(doc.call) }
        plan("#{path}.js", key) { "window.rackbenchRun(#{JSON.generate(run.id.to_s)}, #{HtmlReport::Escape.script_json(doc.call)});\n" }
      end

      def regression_files(docs, regression)
        line = docs.line_of(regression)
        key = [regression.to_h, line && [line.testbed.runs_key, line.key_parts]]
        doc = memo { docs.regression(regression) }
        plan("data/regressions/#{regression.id}.json", key) { json(doc.call) }
        plan("regressions/#{regression.id}.html", key) { Pages::RegressionPage.new(doc.call, @settings.title).render }
      end

      def json(doc) = "#{JSON.pretty_generate(doc)}\n"

      # Writes what changed, removes what went, then the manifest.
      def apply(previous)
        written = []
        unchanged = []
        @plan.each do |path, (digest, make)|
          target = File.join(@root, path)
          if previous[path] == digest && File.file?(target)
            unchanged << path
          else
            write_file(target, make.call)
            written << path
          end
        end
        removed = (previous.keys - @plan.keys).select { |path| remove(path) }
        write_file(File.join(@root, MANIFEST), json(@plan.transform_values(&:first)))
        Result.new(root: @root, written: written, removed: removed, unchanged: unchanged)
      ensure
        @lock&.close
      end

      # Publish never writes over what it did not make: a directory with
      # other files and no manifest is refused.
      def refuse_foreign_directory
        return unless File.directory?(@root) && !File.file?(File.join(@root, MANIFEST))
        return if (Dir.children(@root) - [LOCK]).empty?

        raise Error, "#{@root} holds files but no site of rackbench publish (no #{MANIFEST}): publish into an " \
                     "empty or new directory"
      end

      # The digests of the site already in the directory; {} for a new one.
      def manifest
        path = File.join(@root, MANIFEST)
        return {} unless File.file?(path)

        JSON.parse(File.read(path))
      rescue JSON::ParserError
        raise Error, "#{path} is not a site manifest (invalid JSON): remove the directory's site and publish again"
      end

      # Two publishes into one site wait for each other (a nightly and a
      # publish by hand): the lock is held until the process ends.
      def lock
        FileUtils.mkdir_p(@root)
        @lock = File.open(File.join(@root, LOCK), File::CREAT | File::RDWR)
        @lock.flock(File::LOCK_EX)
      rescue SystemCallError => e
        raise Error, "cannot lock the site #{@root}: #{e.message}"
      end

      def write_file(path, content)
        FileUtils.mkdir_p(File.dirname(path))
        tmp = "#{path}.tmp-#{Process.pid}"
        File.write(tmp, content)
        File.rename(tmp, path)
      rescue SystemCallError => e
        FileUtils.rm_f(tmp) if tmp
        raise Error, "cannot write #{path}: #{e.message}"
      end

      # Removes a file the site no longer has (never outside the site).
      def remove(path)
        target = File.expand_path(path, @root)
        return false unless target.start_with?("#{@root}/") && File.file?(target)

        File.unlink(target)
        dir = File.dirname(target)
        while dir.start_with?("#{@root}/") && Dir.empty?(dir)
          Dir.rmdir(dir)
          dir = File.dirname(dir)
        end
        true
      end
    end
  end
end
