# frozen_string_literal: true

module Rackbench
  module Bisect
    # What a bisection says while it runs, one line per event: a commit's
    # batches starting (and its ruby's build first), each split judged
    # (which side of it holds a step), each confirmation run; and, once
    # the good commit is measured, what the rest will take at the pace of
    # its trials. The runs' own progress (trials, builds) goes to the log.
    class Progress
      # io :: where the lines go
      # :log_path :: the log the runs' own progress goes to, named when a build starts
      # :width :: the most columns a line takes, longer ones wrapped (Text::Width; default: nil: no limit)
      def initialize(io, log_path:, width: nil)
        @io = io
        @log_path = log_path
        @width = width
        @driver = nil
      end

      # The Driver's keywords: on_measure, on_split, on_confirm.
      def callbacks
        { on_build: method(:building), on_measure: method(:measuring), on_skip: method(:skipped), on_ends: method(:ends),
          on_split: method(:split), on_confirm: method(:confirming) }
      end

      # The Driver these lines are about (for the commits' names).
      attr_writer :driver

      # The Cost of +driver+'s bisection, its pilot read from the store.
      def self.cost(driver, settings)
        Cost.new(history: driver.history, settings: settings, subject: driver.subject, experiment: driver.experiment,
                 pilot: driver.pilot, build_s: Rubies::Build::Cache.new.timings.total_s)
      end

      private

      def building(index)
        say "  #{commit_text(index)}: building its ruby (progress in #{@log_path})"
      end

      def measuring(index, batches)
        stored = @driver.measurements.entry(index).batches
        which = stored.zero? ? "#{batches} batches" : "batch#{"es" if batches - stored > 1} #{(stored + 1..batches).to_a.join(", ")}"
        say "  #{commit_text(index)}: #{which}"
      end

      def skipped(index, reason)
        say "  #{commit_text(index)}: skipped, it cannot be measured: #{reason}"
      end

      # The ends judged, and what the rest will take at the good commit's pace.
      def ends(verdict)
        last = @driver.history.size - 1
        text = @driver.ends_judgement.text
        case verdict
        when Search::WORSE
          say "  ##{last} against #0: #{text}: bisecting the #{last - 1} commits between"
          pilot = @driver.measurements.entry(0).records
          cost = Cost.new(history: @driver.history, settings: @driver.settings, subject: @driver.subject,
                          experiment: @driver.experiment, pilot: pilot, build_s: Rubies::Build::Cache.new.timings.total_s)
          say "  at the good commit's pace (#{Experiment::Plan.format_duration(cost.trial_s)} a trial), the rest takes " \
              "about #{Experiment::Plan.format_duration(cost.remaining_s)}"
        when Search::NOT_WORSE then say "  ##{last} against #0: #{text}: no step of the threshold to bisect"
        else say "  ##{last} against #0: #{text}: cannot say at #{@driver.settings.max_batches} batches"
        end
      end

      def split(from, split, to, left, right)
        m = @driver.measurements
        sides = { Search::WORSE => "a step", Search::NOT_WORSE => "no step", Search::UNSURE => "cannot say" }
        say "    ##{split} against ##{from}: #{m.judgement(from, split, @driver.settings.min_step).text} " \
            "(#{sides.fetch(left)}); ##{to} against ##{split}: #{m.judgement(split, to, @driver.settings.min_step).text} " \
            "(#{sides.fetch(right)})"
      end

      def confirming(step, batches)
        say "  confirming ##{step.to} against ##{step.from} in one interleaved run: #{batches} batches"
      end

      def commit_text(index)
        commit = @driver.history[index]
        role = { 0 => " (good)", @driver.history.size - 1 => " (bad)" }.fetch(index, "")
        "##{index}#{role} #{commit.short} #{Terminal.truncate(commit.subject)}"
      end

      def say(line)
        @io.puts Text::Wrap.prose(line, @width)
        @io.flush if @io.respond_to?(:flush)
      end
    end
  end
end
