# frozen_string_literal: true

module Rackbench
  module CLI
    # How `compare` and `gate` read their two sides, A (the baseline) and
    # B (the candidate): two configuration specs of one experiment
    # ('server=puma' 'server=falcon'), or two experiments, each an
    # experiment name, an experiment id, or a results directory (its
    # latest experiment). Included with ReportOptions.
    module CompareSides
      private

      # [Report::Compare, the baseline's Report, the candidate's Report]:
      # the same Report twice for two configuration specs.
      def compare_sides(options, ref_a, ref_b)
        if [ref_a, ref_b].all? { |ref| ref.include?("=") }
          report = with_store(options) do |store|
            Report.new(store, experiment_id: options[:id], name: options[:experiment], **options[:report])
          end
          return [Report::Compare.configurations(report, ref_a, ref_b), report, report]
        end

        report_a, report_b = experiment_reports(options, ref_a, ref_b)
        [Report::Compare.experiments(report_a, report_b, different_machines: options[:different_machines]),
         report_a, report_b]
      end

      # The baseline's and the candidate's Report, two experiments.
      def experiment_reports(options, ref_a, ref_b)
        [experiment_report(ref_a, options), experiment_report(ref_b, options)]
      end

      # The report of an experiment name, an id (digits), or a results
      # directory (its latest experiment).
      def experiment_report(ref, options)
        # A directory is its own results.db, whatever --store says.
        where, which = if File.directory?(ref) then [{ results: ref, store: nil }, {}]
                       elsif ref.match?(/\A\d+\z/) then [options, { experiment_id: Integer(ref) }]
                       else [options, { name: ref }]
                       end
        with_store(where) { |store| Report.new(store, **which, **options[:report]) }
      end
    end
  end
end
