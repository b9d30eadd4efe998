# frozen_string_literal: true

module Rackbench
  module CLI
    # Options `report`, `compare` and `run` share: where the results are,
    # which experiment, and how the statistics judge.
    module ReportOptions
      private

      def results_options(parser, options)
        parser.on("--results DIR", "results directory (default #{CLI::DEFAULT_RESULTS_DIR})") do |v|
          options[:results] = v
        end
        store_option(parser, options)
        parser.on("--experiment NAME", "the latest experiment of that name (default: the latest)") do |v|
          options[:experiment] = v
        end
        parser.on("--id N", Integer, "the experiment with that id (rackbench report --json shows ids)") do |v|
          options[:id] = v
        end
      end

      def statistics_options(parser, report)
        parser.on("--baseline SPEC", "compare with this configuration: dimension=value pairs, e.g. 'ruby=3.1' " \
                                     "(default: the first configuration)") { |v| report[:baseline] = v }
        parser.on("--equivalence PCT", "ratios within ±PCT of 1 count as no difference (default 1%)") do |v|
          report[:equivalence] = fraction(v, "--equivalence")
        end
        parser.on("--instructions-equivalence PCT", "the same band for instructions per request (default 0.1%)") do |v|
          report[:instructions_equivalence] = fraction(v, "--instructions-equivalence")
        end
        parser.on("--detect PCT", "estimate the batches needed to detect a PCT difference (default 1%)") do |v|
          report[:detect] = fraction(v, "--detect")
        end
        parser.on("--confidence PCT", "confidence level of the intervals (default 95%)") do |v|
          report[:confidence] = fraction(v, "--confidence")
        end
        parser.on("--min-batches N", Integer, "ok batches needed for an interval and a verdict (default 5)") do |v|
          report[:min_batches] = v
        end
        parser.on("--max-error-rate PCT", "flag a request-list entry (page) failing above PCT of its requests " \
                                          "(default: the app's limit, 1% unless it sets one)") do |v|
          report[:max_error_rate] = fraction(v, "--max-error-rate")
        end
        parser.on("--bootstrap-seed N", Integer, "seed of the bootstrap resampling (default 1)") do |v|
          report[:seed] = v
        end
      end

      # "30m", "90s" or "1h" => seconds.
      def duration_s(text, option)
        Duration.parse_s(text)
      rescue ArgumentError
        raise UsageError, "#{option} takes a duration such as 30m, 90s or 1h, got '#{text}'"
      end

      # "1%" or "0.01" => 0.01.
      def fraction(text, option)
        value = Float(text.delete_suffix("%"), exception: false)
        raise UsageError, "#{option} takes a percentage such as 1% or a fraction such as 0.01, got '#{text}'" unless value

        text.end_with?("%") ? value / 100.0 : value
      end

      # --store: where the results database is, for every command that
      # reads or writes one.
      def store_option(parser, options)
        parser.on("--store URL", "the results database, e.g. postgres://USER@HOST/DATABASE (default: " \
                                 "$#{CLI::STORE_ENV}, else results.db in the results directory)") do |v|
          options[:store] = v
        end
      end

      # What Store.open is given: --store, else $RACKBENCH_STORE, else the
      # results directory. An empty --store or variable counts as not given.
      def store_target(options)
        given = options.key?(:store) ? options[:store] : ENV.fetch(CLI::STORE_ENV, nil)
        given.to_s.strip.empty? ? options[:results] : given
      end

      def with_store(options, &block)
        target = store_target(options)
        if Store::Connection.scheme(target) == :directory && !File.exist?(File.join(target, Store::Connection::DB_FILE))
          raise UsageError, "no results in #{target} (run an experiment first, or pass --results DIR or --store URL)"
        end

        Store.open(target, &block)
      end

      # What `run` and `micro` end with: the statistics table (or the JSON
      # document) of the experiment just run, report.html in the results
      # directory, and the count line. Progress and the count go to stderr
      # with --json, so stdout holds only the document. +baseline+: the
      # run's --baseline spec (default: nil: the first configuration).
      # :store :: the results database (default: the results directory's)
      # :width :: the most columns a line of the table takes (Text::Width; default: nil: no limit)
      def print_experiment_report(results_dir, summary, json:, baseline: nil, store: results_dir, width: nil)
        Store.open(store) do |store|
          report = Report.new(store, experiment_id: summary.experiment_id, baseline: baseline)
          html = write_report_html(report, results_dir)
          json ? @out.puts(JSON.pretty_generate(report.to_h)) : @out.print(Report::Terminal.new(report, color: color?, width: width).render)
          (json ? @err : @out).puts "HTML report: #{html}" if html
        end
        line = "#{summary.ok} ok, #{summary.failed} failed"
        line += ", #{summary.already_done} from earlier runs" if summary.already_done.positive?
        line += ", #{summary.skipped} configurations skipped" if summary.skipped.positive?
        line += ", #{summary.not_run} planned trials not needed (--detect)" if summary.not_run.to_i.positive?
        (json ? @err : @out).puts line
      end

      # The trials are stored whatever happens here: a report that cannot be
      # written is a warning, and `rackbench report --html` can retry.
      def write_report_html(report, results_dir)
        report.write_html(File.join(results_dir, "report.html"))
      rescue Error, SystemCallError, LoadError => e
        @err.puts "rackbench: could not write report.html: #{e.message}"
        nil
      end

      def color?
        @out.respond_to?(:tty?) && @out.tty? && ENV["NO_COLOR"].to_s.empty?
      end
    end
  end
end
