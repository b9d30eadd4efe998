# frozen_string_literal: true

require "time"
require_relative "errors"

module Rackbench
  # The regression gate (`rackbench gate`, `compare --fail-on`): a pure
  # function of stored results that says whether a candidate regressed
  # against its baseline beyond the thresholds (Rule), in one of three
  # statuses the CLI turns into exit codes (doc/ci.md):
  #
  # * OK: no configuration regressed beyond a threshold;
  # * REGRESSED: at least one did, with the statistics' confidence;
  # * CANNOT_SAY: the results cannot tell: too few batches, failed trials,
  #   a configuration missing on a side, a figure not measured, or the
  #   sides ran on different machines.
  #
  # Pairs of configurations come from one experiment (Gate.within: each
  # configuration against its baseline, --baseline) or two (Gate.between:
  # Report::Compare's pairs). Every check of every pair is judged at the
  # family's confidence (Stats.family_confidence), so the chance that an
  # unchanged candidate fails the gate stays at most 1 - confidence however
  # many configurations and figures are checked.
  #
  #   gate = Rackbench::Gate.within(report, rules: Gate::Rule.parse_all(["rps>2%"]))
  #   gate.status   # => "regressed"
  #   gate.to_h     # doc/output.md, "The gate document"
  class Gate
    OK = "ok"
    REGRESSED = "regressed"
    CANNOT_SAY = "cannot say"
    STATUSES = [REGRESSED, CANNOT_SAY, OK].freeze # worst first
    FORMAT = "rackbench-gate"
    FORMAT_VERSION = 1
    DEFAULT_RULES = ["rps>2%"].freeze

    # Two configurations compared (Report::ConfigSummary, or nil for a
    # side that lacks it), and the words that name the pair; +diffs+, a
    # Proc that makes where the time went between them (Report::Diffs or
    # nil), asked only of a pair that regressed.
    Pair = Struct.new(:label, :baseline, :candidate, :diffs)

    # Functions and frames under a regression in the gate document: the
    # Markdown a pull request shows lists these.
    DIFF_ROWS = 5

    # One pair judged: its checks, the problems that keep the gate from
    # judging it (failed trials, a missing side), and its status.
    Result = Struct.new(:pair, :checks, :problems, :status, keyword_init: true) do
      def to_h
        { "label" => pair.label, "baseline_id" => pair.baseline&.id, "candidate_id" => pair.candidate&.id,
          "status" => status, "problems" => problems, "checks" => checks.map(&:to_h), "diffs" => diffs }
      end

      # Where the time went, for a regressed pair: its diff's headlines
      # and first DIFF_ROWS functions and frames; nil otherwise.
      def diffs
        return @diffs if defined?(@diffs)

        found = status == REGRESSED && pair.diffs ? pair.diffs.call : nil
        @diffs = found && Gate.shortened(found.to_h)
      end
    end

    # A diff (Report::Diffs#to_h) cut to what a gate shows: no flame
    # graphs, DIFF_ROWS rows.
    def self.shortened(diff)
      short = ->(part) { part && part.except("flame").merge("rows" => part["rows"].first(DIFF_ROWS)) }
      { "functions" => short.call(diff["functions"]), "profile" => short.call(diff["profile"]),
        "allocations" => diff["allocations"] }
    end

    # Each configuration of +report+ against its baseline (Report's
    # --baseline: a spec, or the first configuration); a configuration
    # with none cannot be judged.
    def self.within(report, rules:, strict: false)
      pairs = report.configs.reject(&:baseline?).map do |c|
        Pair.new(c.label, c.baseline_config, c, -> { report.diffs.find { |diff| diff.b.equal?(c) } })
      end
      side = Side.of(report)
      new(pairs: pairs, rules: rules, options: report.options, baseline: side, candidate: side, strict: strict)
    end

    # The pairs of +compare+ (a Report::Compare of two experiments, or of
    # two configuration specs of one) with the Reports they were read
    # from: a configuration of the baseline without a partner cannot be
    # judged; one only the candidate has is new, and said.
    def self.between(compare, baseline_report, candidate_report, rules:, strict: false)
      # One pair: its configuration in full, which names it better than
      # the one dimension a lone configuration's label would show.
      pairs = compare.pairs.map { |p| Pair.new(compare.pairs.size == 1 ? p.a.id : p.label, p.a, p.b, -> { p.diffs }) }
      if baseline_report.equal?(candidate_report)
        new_ids = []
      else
        paired_a = compare.pairs.map { |p| p.a.id }
        paired_b = compare.pairs.map { |p| p.b.id }
        pairs += baseline_report.configs.reject { |c| paired_a.include?(c.id) }.map { |c| Pair.new(c.id, c, nil) }
        new_ids = candidate_report.configs.map(&:id) - paired_b
      end
      new(pairs: pairs, rules: rules, options: compare.options, baseline: Side.of(baseline_report),
          candidate: Side.of(candidate_report), new_configs: new_ids, strict: strict)
    end

    # Two experiments without a configuration in common: each of the
    # baseline's cannot be judged.
    def self.nothing_in_common(baseline_report, candidate_report, rules:, strict: false)
      pairs = baseline_report.configs.map { |c| Pair.new(c.id, c, nil) }
      new(pairs: pairs, rules: rules, options: baseline_report.options, baseline: Side.of(baseline_report),
          candidate: Side.of(candidate_report), new_configs: candidate_report.configs.map(&:id), strict: strict)
    end

    attr_reader :results, :rules, :baseline, :candidate, :confidence, :options

    # pairs :: [Pair]
    # rules :: [Rule] (Rule.parse_all)
    # options :: Report::Options (confidence, equivalence, min_batches, resamples, seed)
    # baseline, candidate :: Side
    # new_configs :: ids of configurations only the candidate has (default: [])
    # strict :: a check whose interval does not rule out a regression beyond
    #           its limit cannot say (Judge) (default: false)
    def initialize(pairs:, rules:, options:, baseline:, candidate:, new_configs: [], strict: false)
      raise ArgumentError, "a gate needs at least one rule" if rules.empty?

      @rules = rules
      @options = options
      @baseline = baseline
      @candidate = candidate
      @new_configs = new_configs
      probe = Judge.new(options, confidence: options.confidence)
      @checks_count = pairs.sum { |pair| rules.count { |rule| probe.judgeable?(pair, rule) } }
      @confidence = Stats.family_confidence(options.confidence, [@checks_count, 1].max)
      @strict = strict
      judge = Judge.new(options, confidence: @confidence, strict: strict)
      @results = pairs.map { |pair| result(pair, judge) }.sort_by.with_index { |r, i| [STATUSES.index(r.status), i] }
    end

    # Why the whole gate cannot judge, whatever its pairs say: the sides
    # ran on different machines, or there is nothing to compare.
    def blockers
      @blockers ||= begin
        list = machine_differences
        list << "no configuration to compare" if @results.empty?
        list
      end
    end

    # What may have moved the figures without making another machine
    # (kernel, governor), and the configurations only the candidate has.
    def notes
      @notes ||= begin
        machines = @baseline.machines + @candidate.machines
        software = machines.drop(1).flat_map { |env| Report::MachineMatch.notes(machines.first, env) }.uniq
        software.map { |n| "the machine changed between the runs: #{n}" } +
          @new_configs.map { |id| "#{id}: only in the candidate, not judged" }
      end
    end

    # OK, REGRESSED or CANNOT_SAY: a blocker says CANNOT_SAY whatever the
    # pairs say; else one regressed pair says REGRESSED, even when others
    # cannot be judged (it is a finding); else one pair that cannot be
    # judged says CANNOT_SAY.
    def status
      return CANNOT_SAY unless blockers.empty?

      STATUSES.find { |s| @results.any? { |r| r.status == s } } || OK
    end

    # One line per reason for the status: each regressed pair's checks,
    # or the blockers and what could not be judged; [] when OK.
    def reasons
      case status
      when REGRESSED
        @results.select { |r| r.status == REGRESSED }.flat_map do |r|
          r.checks.select { |c| c.status == REGRESSED }.map { |c| "#{r.pair.label}: #{c.figure.words} #{c.explanation}" }
        end
      when CANNOT_SAY
        blockers + @results.select { |r| r.status == CANNOT_SAY }.flat_map do |r|
          (r.problems + r.checks.select { |c| c.status == CANNOT_SAY }.map { |c| "#{c.figure.words}: #{c.explanation}" })
            .map { |text| "#{r.pair.label}: #{text}" }
        end
      else []
      end
    end

    # "1 of 3 configurations regressed beyond the thresholds"
    def summary
      counts = @results.map(&:status).tally
      total = @results.size
      configurations = "configuration#{"s" unless total == 1}"
      case status
      when REGRESSED then "#{counts[REGRESSED]} of #{total} #{configurations} regressed beyond the thresholds"
      when CANNOT_SAY
        blockers.empty? ? "#{counts[CANNOT_SAY]} of #{total} #{configurations} cannot be judged" : "the results cannot be compared"
      else "no configuration of #{total} regressed beyond the thresholds"
      end
    end

    # The gate document (doc/output.md).
    def to_h
      {
        "format" => FORMAT, "format_version" => FORMAT_VERSION, "generated_at" => Time.now.utc.iso8601,
        "rackbench_version" => Rackbench::VERSION, "status" => status, "summary" => summary, "reasons" => reasons,
        "blockers" => blockers, "notes" => notes, "rules" => @rules.map(&:to_h),
        "settings" => { "confidence" => @options.confidence, "checks" => @checks_count, "strict" => @strict,
                        "family_confidence" => @confidence, "equivalence" => @options.equivalence,
                        "min_batches" => @options.min_batches, "bootstrap_seed" => @options.seed },
        "baseline" => @baseline.to_h, "candidate" => @candidate.to_h,
        "same_experiment" => @baseline.same_experiment?(@candidate),
        "pairs" => @results.map(&:to_h)
      }
    end

    private

    def result(pair, judge)
      checks = @rules.map { |rule| judge.check(pair, rule) }
      problems = problems(pair)
      status = if !problems.empty? then CANNOT_SAY
               else STATUSES.find { |s| checks.any? { |c| c.status == s } } || OK
               end
      Result.new(pair: pair, checks: checks, problems: problems, status: status)
    end

    # What keeps +pair+ from being judged whatever its figures say.
    def problems(pair)
      list = []
      list << "no baseline configuration to compare with" if pair.baseline.nil?
      list << "not in the candidate: none of its trials ran" if pair.candidate.nil?
      { "baseline" => pair.baseline, "candidate" => pair.candidate }.each do |side, config|
        next if config.nil?

        # Time and instructions trials alike: a failed one is a batch the
        # figures lack.
        failed = config.all_trials.reject(&:ok?)
        next if failed.empty?

        reason = failed.map(&:reason).compact.first.to_s.lines.first.to_s.strip
        list << "#{failed.size} failed trial#{"s" unless failed.size == 1} on the #{side} side" \
                "#{": #{reason}" unless reason.empty?}"
      end
      list
    end

    # Every stored machine of both sides against the baseline's first: the
    # identifying fields that differ, in words (Report::MachineMatch). A
    # testbed label on both sides makes hosts of one hardware one machine.
    def machine_differences
      reference = @baseline.machines.first
      return [] unless reference

      sides = { "baseline" => @baseline, "candidate" => @candidate }
      sides.flat_map do |name, side|
        side.machines.filter_map do |env|
          found = Report::MachineMatch.differences(reference, env, testbed_a: @baseline.labels.testbed,
                                                                   testbed_b: side.labels.testbed)
          next nil if found.empty?

          where = name == "baseline" ? "the baseline's runs ran on more than one machine" : "the candidate ran on another machine than the baseline"
          "#{where} (#{found.join("; ")})"
        end
      end.uniq
    end
  end
end

require_relative "gate/rule"
require_relative "gate/check"
require_relative "gate/side"
require_relative "gate/markdown"
require_relative "gate/terminal"
