# frozen_string_literal: true

require_relative "instructions_gc_summary"

module Rackbench
  class Report
    # Instructions per request of one configuration over its instructions
    # trials (`measure: instructions`), with the batch statistics its
    # throughput has: median, mean, CV, the percentile-bootstrap interval of
    # the median (from Options#min_batches batches), and against the
    # baseline's the ratio of medians with its interval and a verdict.
    # Fewer instructions per request is faster: a ratio above 1 (the
    # interval wholly above, outside the equivalence band) is "slower".
    #
    # Also how the count divides between the processes (their medians per
    # role and program), and the functions that cost the most per request
    # over the batches (callgrind's self costs, summed over every batch's
    # processes and divided by the batches' requests).
    #
    # The figure is the instructions per request outside Ruby's GC when
    # every ok batch knows its GC's share (OUTSIDE_GC; the GC apart in
    # #gc), else every instruction of the window (TOTAL): #method and
    # #method_note say which and why. Two configurations are compared on
    # the figure they both have.
    class InstructionsSummary
      OUTSIDE_GC = "outside_gc"
      TOTAL = "total"
      # Functions listed per configuration.
      FUNCTIONS_SHOWN = 30

      # The summary of +trials+ (a configuration's instructions trials,
      # TrialEntry objects), or nil when it has none.
      def self.of(trials, options)
        trials.empty? ? nil : new(trials, options)
      end

      attr_reader :trials, :ok_trials, :values, :batch_numbers, :summary, :ci

      # trials :: the configuration's instructions trials, in batch order
      # options :: the Report::Options (confidence, resamples, seed, min_batches)
      def initialize(trials, options)
        @options = options
        @trials = trials
        @ok_trials = trials.select { |t| t.ok? && t.instructions&.fetch("per_request", nil) }
        outside = !@ok_trials.empty? && @ok_trials.all? { |t| t.instructions["outside_gc_per_request"] }
        @method = outside ? OUTSIDE_GC : TOTAL
        @values = values_of(@method)
        @batch_numbers = @ok_trials.map(&:batch)
        @summary = Stats.summary(@values)
        @ci = interval(@values)
        @gc = InstructionsGcSummary.new(@ok_trials, options)
      end

      # OUTSIDE_GC or TOTAL: what #values are.
      attr_reader :method
      # The GC in the windows (InstructionsGcSummary).
      attr_reader :gc

      # Each ok batch's instructions per request by +method+ (OUTSIDE_GC:
      # outside the GC; TOTAL: all of them).
      def values_of(method)
        key = method == OUTSIDE_GC ? "outside_gc_per_request" : "per_request"
        @ok_trials.map { |t| t.instructions[key] }
      end

      # One line: which figure and why (the report's instructions table
      # shows it under its title).
      def method_note
        if @method == OUTSIDE_GC
          return "outside Ruby's GC, shown apart below, since whether a GC cycle falls in a window moves a count " \
                 "by up to 10% (each process ran a full GC at the window's start; each request found the server asleep)"
        end

        missing = @ok_trials.find { |t| !t.instructions["outside_gc_per_request"] }
        why = if missing.nil? then "no ok batch"
              elsif !missing.instructions.key?("gc") then "batches stored before the GC was counted apart"
              elsif missing.instructions["gc"].nil? then "a batch without the GC agent's counts"
              else "this ruby names none of its GC's functions and its probe could not find them"
              end
        "including Ruby's GC, which could not be told apart (#{why}): whether a GC cycle falls in a window moves " \
          "it (each process ran a full GC at the window's start; each request found the server asleep)"
      end

      def batches = @ok_trials.size
      def failed = @trials.size - @ok_trials.size
      def median = @summary.median

      # Against +baseline+ (another InstructionsSummary): {"ratio",
      # "ratio_ci95", "verdict", "explanation", "batches_needed"}, the ratio
      # of this median to the baseline's; the verdict in the words of time
      # (fewer instructions: "faster").
      def compare(baseline)
        return nil if baseline.values.empty? || @values.empty?

        # The figure both have: outside the GC when both know it.
        method = baseline.method == @method ? @method : TOTAL
        c = Stats.compare(baseline.values_of(method), values_of(method), **@options.compare_options(instructions: true))
        verdict = { Stats::FASTER => Stats::SLOWER, Stats::SLOWER => Stats::FASTER }.fetch(c.verdict, c.verdict)
        explanation = c.explanation.to_s.sub("above 1", "above 1: more instructions per request")
                       .sub("below 1", "below 1: fewer instructions per request")
        { "ratio" => c.ratio, "ratio_ci95" => c.ratio_ci, "verdict" => verdict, "explanation" => explanation,
          "batches_needed" => c.batches_needed, "method" => method }
      end

      # Per (role, program): the median over the batches of its
      # instructions per request, and of its share of the total.
      def processes
        rows = Hash.new { |hash, key| hash[key] = [] }
        @ok_trials.each do |t|
          doc = t.instructions
          Array(doc["processes"]).group_by { |p| [p["role"], p["program"]] }.each do |key, list|
            rows[key] << [list.sum { |p| p["per_request"].to_f }, list.size]
          end
        end
        rows.map do |(role, program), list|
          { "role" => role, "program" => program, "count" => Stats.summary(list.map(&:last)).median,
            "per_request" => Stats.summary(list.map(&:first)).median }
        end.sort_by { |p| -p["per_request"].to_f }
      end

      # The helpers left out of the count (Instructions::Collection: programs
      # the server started during the window, on the clock): their
      # programs and the median over the batches of their instructions per
      # request together; nil when no batch had any.
      def left_out
        lists = @ok_trials.map { |t| Array(t.instructions["left_out"]) }
        return nil if lists.all?(&:empty?)

        { "programs" => lists.flatten.map { |p| p["program"] }.uniq.sort,
          "per_request" => Stats.summary(lists.map { |list| list.sum { |p| p["per_request"].to_f } }).median }
      end

      # The costliest functions per request over the batches: [{"object",
      # "name", "per_request", "share"}], the share of the median total.
      def functions
        requests = @ok_trials.sum { |t| t.instructions["requests"].to_i }
        return [] unless requests.positive?

        sums = Hash.new(0)
        @ok_trials.each do |t|
          Array(t.instructions["functions"]).each { |f| sums[[f["object"], f["name"]]] += f["instructions"].to_i }
        end
        total = @ok_trials.sum { |t| t.instructions["instructions"].to_i }
        sums.sort_by { |_, v| -v }.first(FUNCTIONS_SHOWN).map do |(object, name), sum|
          { "object" => object, "name" => name, "per_request" => sum.fdiv(requests),
            "share" => total.positive? ? sum.fdiv(total) : nil }
        end
      end

      # The configuration's "instructions" entry of the report document
      # (doc/output.md, configs.instructions); +baseline+ is the baseline's
      # InstructionsSummary (nil for none or the baseline itself).
      def to_h(baseline: nil, baseline_id: nil)
        {
          "batches" => batches, "failed" => failed,
          "per_request" => { "median" => median, "mean" => @summary.mean, "cv" => @summary.cv, "ci95" => @ci,
                             "per_batch" => @values, "batch_numbers" => @batch_numbers },
          "method" => @method, "method_note" => method_note, "total_per_request" => total_h,
          "gc" => @gc.to_h(baseline: baseline&.gc), "gate" => gate_h,
          "baseline_id" => baseline && baseline_id, "against_baseline" => baseline && compare(baseline),
          "valgrind" => @ok_trials.map { |t| t.instructions["valgrind"] }.compact.first,
          "processes" => processes, "left_out" => left_out, "functions" => functions
        }
      end

      private

      def interval(values)
        return nil if values.size < @options.min_batches

        Stats.bootstrap_ci(values, statistic: :median, confidence: @options.confidence,
                                   resamples: @options.resamples, seed: @options.seed)
      end

      # Every instruction of the window, GC included: the figure itself
      # when the GC is not apart.
      def total_h
        totals = values_of(TOTAL)
        summary = Stats.summary(totals)
        { "median" => summary.median, "cv" => summary.cv, "ci95" => interval(totals), "per_batch" => totals }
      end

      # The engine's gate (Instructions::Window): how often a request of
      # the window waited for the server to sleep, median over the batches.
      def gate_h
        waits = @ok_trials.filter_map do |t|
          quiet = t.instructions["quiet"]
          quiet && t.instructions["requests"].to_i.positive? ? quiet["waits"].to_f / t.instructions["requests"] : nil
        end
        waits.empty? ? nil : { "waits_per_request" => Stats.summary(waits).median }
      end
    end
  end
end
