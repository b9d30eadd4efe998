# frozen_string_literal: true

require "json"

module Rackbench
  class Regressions
    # Brings the stored regressions in line with the steps a publish found
    # (Publish::Catalog's lines): a step in the worse direction not stored
    # yet becomes a row, once; a stored one gets its new figures, range and
    # state. A regression is known by its series and the run that found
    # it, so the same step is never stored twice, whether the runs are
    # published one night at a time or all at once (the detection is the
    # same either way).
    class Tracker
      # What a reconcile did: the ids of the regressions it stored and of
      # those whose state or range it changed.
      Outcome = Struct.new(:created, :changed, keyword_init: true)

      # Figures that are rewritten when they move, without a new event.
      FIGURES = %i[change change_low change_high level_before level_after].freeze

      def initialize(regressions, catalog)
        @regressions = regressions
        @catalog = catalog
      end

      def reconcile
        existing = @regressions.by_step
        outcome = Outcome.new(created: [], changed: [])
        @catalog.lines.each do |line|
          line.steps.each do |step|
            next unless step.direction == line.worse

            columns = columns_of(line, step)
            state, note = desired(line, step)
            row = existing[[columns[:series], columns[:detected_experiment_id]]]
            if row
              outcome.changed << row.id if update(row, columns, state, note)
            else
              outcome.created << insert(line, step, columns, state, note)
            end
          end
        end
        outcome
      end

      private

      # Stores a new regression as found, then moves it to the state the
      # runs since have given it (a publish of runs already confirmed, or
      # fixed): its events tell its story whenever it is published.
      def insert(line, step, columns, state, note)
        id = @regressions.insert(columns, state: "detected", note: "found at #{run_words(line.testbed.runs[step.found_at])}")
        @regressions.update(id, {}, state: state, note: note) unless state == "detected"
        id
      end

      # Updates +row+; true when its state or range moved.
      def update(row, columns, state, note)
        state = next_state(row, state)
        moved = %i[step_experiment_id good_experiment_id bad_experiment_id fixed_experiment_id]
                .any? { |c| row[c] != columns[c] }
        figures = FIGURES.any? { |c| row[c] != columns[c] } || row.document.except("bisect") != columns[:document]
        return false unless state || moved || figures

        document = row.document.slice("bisect").merge(columns[:document])
        @regressions.update(row.id, columns.except(:series, :detected_experiment_id).merge(document: document),
                            state: state, note: state ? note : (moved ? "its range moved: #{range_words(columns)}" : nil),
                            touch: moved)
        !state.nil? || moved
      end

      # The state publish would give the step, and why.
      def desired(line, step)
        runs = line.testbed.runs
        case step.state
        when "refuted" then ["false_positive", "the runs after it were back at the old level (#{run_words(runs[step.resolved_at])})"]
        when "confirmed"
          return ["confirmed", "it held in the runs after it (#{run_words(runs[step.resolved_at])})"] unless step.fixed_at

          ["fixed", "a later step brought it back (#{run_words(runs[step.fixed_at])})"]
        else ["detected", "found at #{run_words(runs[step.found_at])}"]
        end
      end

      # The state to move +row+ to, or nil: publish's own states follow the
      # runs; a person's stay, but for a step back that fixes it.
      def next_state(row, desired)
        return nil if row.state == desired
        return desired if row.automatic?
        return "fixed" if desired == "fixed" && %w[detected confirmed accepted].include?(row.state)

        nil
      end

      def columns_of(line, step)
        runs = line.testbed.runs
        good = previous_valued(line, step.first)
        { series: line.key, experiment: line.testbed.name, machine: JSON.generate(line.testbed.machine_key),
          config_id: line.config_id, dims: JSON.generate(line.dims), figure: line.figure.name,
          detected_experiment_id: runs[step.found_at].id, step_experiment_id: runs[step.index].id,
          good_experiment_id: good && runs[good].id, bad_experiment_id: runs[step.last].id,
          fixed_experiment_id: step.fixed_at && runs[step.fixed_at].id, direction: step.direction,
          change: step.change, change_low: step.interval&.first, change_high: step.interval&.last,
          level_before: step.level_before, level_after: step.level_after, threshold: step.threshold, rule: step.rule,
          document: document(line, step, good) }
      end

      # The run before +index+ that has the line's figure, or nil.
      def previous_valued(line, index)
        (index - 1).downto(0).find { |i| line.points[i]&.median }
      end

      def document(line, step, good)
        runs = line.testbed.runs
        bad = runs[step.last]
        range = { "good" => good && run_h(runs[good]), "first" => run_h(runs[step.first]), "step" => run_h(runs[step.index]),
                  "bad" => run_h(bad), "found" => run_h(runs[step.found_at]), "runs" => step.last - step.first + 1,
                  "changes" => good ? bad.labels.changes_from(runs[good].labels) : [],
                  "revisions" => revisions(good && runs[good], bad) }
        { "config_label" => Publish.config_label(line), "range" => range }
      end

      # Each revision that moved across the range: what to bisect.
      def revisions(good, bad)
        bad.labels.revisions.filter_map do |r|
          before = good&.labels&.revision(r["of"], r["name"])
          next nil if before && before["commit"] == r["commit"]

          { "of" => r["of"], "name" => r["name"], "good" => before&.fetch("commit", nil), "bad" => r["commit"],
            "ref" => r["ref"] }.compact
        end
      end

      def run_h(run)
        { "experiment_id" => run.id, "created_at" => run.created_at.utc.iso8601, "labels_text" => run.labels.text,
          "revisions" => run.labels.revisions }
      end

      def run_words(run)
        text = run.labels.text
        "the run of #{run.created_at.utc.strftime("%Y-%m-%d %H:%M")}, experiment id #{run.id}#{", #{text}" unless text.empty?}"
      end

      def range_words(columns)
        range = columns[:document]["range"]
        good = range["good"] ? "experiment id #{range["good"]["experiment_id"]}" : "the first run"
        "from #{good} to experiment id #{range["bad"]["experiment_id"]}"
      end
    end
  end
end
