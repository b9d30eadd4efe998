# frozen_string_literal: true

require "time"

module Rackbench
  module Bisect
    # A finished bisection as one document (doc/output.md, "The bisect
    # document"), which every view reads: the terminal (Terminal), the
    # Markdown for an issue or a pull request (Markdown), the page with the
    # figure along the commits walked (HtmlPage) and --json.
    #
    # status :: Search's: "found" (steps named), "no step" (good and bad
    #           do not differ beyond the threshold), "cannot say" (at the
    #           most batches), "unmeasurable" (an end cannot be measured),
    #           "spread" (no commit makes a step of min_step)
    class Result
      FORMAT = "rackbench-bisect"
      FORMAT_VERSION = 1
      CONFIRMED = "confirmed"
      NOT_CONFIRMED = "not confirmed"
      UNCONFIRMED = "cannot say"
      CONFIRMATIONS = { Search::WORSE => CONFIRMED, Search::NOT_WORSE => NOT_CONFIRMED,
                        Search::UNSURE => UNCONFIRMED }.freeze

      # :driver :: the Driver that ran it (history, measurements, ...)
      # :outcome :: Search::Outcome
      # :confirmations :: Driver::Confirmation per step, in the steps' order
      def initialize(driver:, outcome:, confirmations:)
        @driver = driver
        @outcome = outcome
        @confirmations = confirmations
        @history = driver.history
        @measurements = driver.measurements
        @settings = driver.settings
      end

      def status = @outcome.status

      def to_h
        @to_h ||= {
          "format" => FORMAT, "format_version" => FORMAT_VERSION, "generated_at" => Time.now.utc.iso8601,
          "rackbench_version" => Rackbench::VERSION,
          "experiment" => { "name" => @driver.experiment.name, "source" => @driver.experiment.source },
          "subject" => { "kind" => @driver.subject.kind, "name" => @driver.subject.name,
                         "repository" => @driver.subject.repository, "subdir" => @driver.subject.subdir },
          "settings" => @settings.to_h, "status" => status, "summary" => summary,
          "good" => @history.good.to_h, "bad" => @history.bad.to_h, "commits" => @history.size - 1,
          "ends" => ends, "steps" => steps, "spreads" => spans(@outcome.spreads), "unsure" => spans(@outcome.unsure),
          "measured" => measured
        }
      end

      private

      # One line for the status.
      def summary
        case status
        when Search::FOUND
          firsts = @outcome.steps.map { |s| @history[s.to].short }
          noun = firsts.size == 1 ? "the first bad commit is" : "#{firsts.size} steps, their first bad commits"
          "#{noun} #{firsts.join(" and ")}"
        when Search::NO_STEP
          "good and bad do not differ by more than #{Units.percent_trimmed(@settings.threshold)}: nothing to bisect"
        when Search::CANNOT_SAY
          "cannot say whether bad is more than #{Units.percent_trimmed(@settings.threshold)} worse than good " \
            "at #{@settings.max_batches} batches"
        when Search::SPREAD
          "no commit makes a step of #{Units.percent_trimmed(@settings.min_step)}: the change is spread over several"
        else @outcome.reason
        end
      end

      def ends
        return nil if status == Search::UNMEASURABLE

        judgement_h(@driver.ends_judgement)
      end

      def steps
        return [] if @outcome.steps.empty?

        total = @driver.ends_judgement.headline&.ratio
        @outcome.steps.each_with_index.map do |step, i|
          from = @history[step.from]
          to = @history[step.to]
          effect = @measurements.judgement(step.from, step.to, @settings.min_step)
          {
            "last_good" => from.to_h, "first_bad" => to.to_h.merge("diff_stat" => @history.diff_stat(to)),
            "exact" => step.exact?, "candidates" => step.between.map { |index| @history[index].to_h } + [to.to_h],
            "effect" => judgement_h(effect), "share" => share(effect.headline&.ratio, total),
            "confirmation" => confirmation_h(@confirmations[i])
          }
        end
      end

      # The share of the ends' change a step makes, in log terms (two
      # steps of 1.0049 make 1.01 together: each half).
      def share(ratio, total)
        return nil unless ratio && total && total != 1.0

        Math.log(ratio) / Math.log(total)
      end

      def confirmation_h(confirmation)
        return nil unless confirmation

        { "status" => CONFIRMATIONS.fetch(confirmation.verdict), "experiment" => confirmation.experiment_name,
          "reason" => confirmation.reason,
          "judgement" => confirmation.judgement && judgement_h(confirmation.judgement) }
      end

      def spans(list)
        list.map do |span|
          judgement = @measurements.judgement(span.from, span.to, @settings.min_step)
          { "from" => @history[span.from].to_h, "to" => @history[span.to].to_h, "change" => judgement.text }
        end
      end

      # Every commit measured or set aside, in the history's order, with
      # its figure, its change from the good commit, and the gems its
      # servers loaded that the good commit's did not.
      def measured
        good = @measurements.entries.find { |e| e.index.zero? }
        @measurements.entries.map do |entry|
          commit = @history[entry.index]
          set_aside = @outcome.set_aside[entry.index]
          row = commit.to_h.merge("index" => entry.index, "experiment" => entry.experiment&.name,
                                  "batches" => entry.ok_batches, "side" => side(entry.index),
                                  "status" => set_aside&.status || "measured",
                                  "reason" => set_aside&.reason || entry.reason)
          next row if entry.reason || entry.experiment_id.nil?

          row.merge(figures(entry), "against_good" => against_good(entry), "gems_differ" => gems_differ(good, entry))
        end
      end

      # "good" before the first step, "bad" after the last, "after step N"
      # between steps N and N + 1; nil when no step was found.
      def side(index)
        return nil unless status == Search::FOUND

        passed = @outcome.steps.count { |s| s.to <= index }
        return "good" if passed.zero?
        return "bad" if passed == @outcome.steps.size

        "after step #{passed}"
      end

      # Each configuration's median and interval of the figure.
      def figures(entry)
        configs = @measurements.report(entry.index).configs.map do |config|
          values = @settings.figure.of(config) || []
          summary = Stats.summary(values)
          ci = if values.size >= @settings.min_batches
                 Stats.bootstrap_ci(values, statistic: :median, confidence: @settings.confidence)
               end
          { "config" => config.id, "median" => summary.median, "ci" => ci, "cv" => summary.cv, "values" => values }
        end
        { "configs" => configs, "median" => configs.first&.fetch("median") }
      end

      def against_good(entry)
        return nil if entry.index.zero?

        judgement_h(@measurements.judgement(0, entry.index, @settings.min_step))
      end

      # The gems (name, the good commit's version, this one's) its
      # servers loaded at other versions than the good commit's: its own
      # Gemfile.lock changed them.
      def gems_differ(good, entry)
        return [] if good.nil? || good.equal?(entry) || good.experiment_id.nil?

        Report::GemDifferences.between(gems(good), gems(entry))
      end

      def gems(entry)
        @measurements.report(entry.index).configs.flat_map(&:all_trials).filter_map(&:gems).first || {}
      end

      def judgement_h(judgement)
        check = judgement.headline
        { "verdict" => judgement.verdict.to_s, "text" => judgement.text, "status" => judgement.gate.status,
          "reasons" => judgement.gate.reasons, "config" => judgement.gate.results.find { |r| r.checks.include?(check) }&.pair&.label,
          "baseline_median" => check&.baseline, "candidate_median" => check&.candidate, "ratio" => check&.ratio,
          "ratio_ci" => check&.ratio_ci, "worsening" => check&.worsening, "worsening_ci" => judgement.worsening_ci,
          "limit" => check&.rule&.limit,
          "explanation" => check&.explanation }
      end
    end
  end
end
