# frozen_string_literal: true

module Rackbench
  module Test
    # What a failed test that ran `rackbench` prints before its directories
    # go: the tail of the last trials' logs (results/logs/NNNN-SLUG.log: the
    # boot, the checks, the server's output) and of the app's own logs of
    # those trials (results/work/SLUG/app-logs/), so that the reader of a
    # red run sees why without the results directory, which the test's
    # `after` removes. Cli#rackbench and #spawn_rackbench note each
    # --results they are given.
    module FailureLogs
      TRIALS = 2
      LINES = 25

      # Notes the results directory of a command's +args+ (run in +chdir+).
      def note_results_dir(args, chdir)
        index = args.index("--results")
        return unless index && args[index + 1]

        (@results_dirs ||= []) << File.expand_path(args[index + 1], chdir)
      end

      # Minitest's hook before the test's own teardown (its `after`).
      def before_teardown
        super
        print_failure_logs unless passed? || skipped?
      end

      private

      def print_failure_logs
        (@results_dirs || []).uniq.each do |results|
          trial_logs = Dir.glob(File.join(results, "logs", "[0-9][0-9][0-9][0-9]-*.log"))
          trial_logs.max_by(TRIALS) { |path| File.mtime(path) }.reverse.each do |log|
            print_tail(log)
            Dir.glob(File.join(results, "work", File.basename(log, ".log"), "app-logs", "**", "*"))
               .select { |path| File.file?(path) }.sort.each { |path| print_tail(path) }
          end
        end
      end

      def print_tail(path)
        lines = File.readlines(path, chomp: true).last(LINES)
        puts "--- #{name} failed: the last #{lines.size} lines of #{path}", lines, "---"
      rescue SystemCallError => e
        puts "--- #{name} failed: #{path}: #{e.message}"
      end
    end
  end
end
