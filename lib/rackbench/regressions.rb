# frozen_string_literal: true

require "etc"
require "json"
require "securerandom"
require_relative "errors"

module Rackbench
  # The regressions of a store (doc/publish.md): steps in the worse
  # direction that `rackbench publish` found in a series (Stats::
  # StepDetection), each a row with its series, size, interval and commit
  # range, and a state with who set it, when and why; every change is an
  # event. LLVM LNT's states: a regression is found ("detected"), holds in
  # the runs after it ("confirmed"), goes away with a later step back
  # ("fixed"), or is judged by a person a "false positive" or "accepted"
  # (not to be fixed).
  #
  # publish sets states as the runs say; a person's state is never
  # overwritten, except that a later step back still marks a confirmed or
  # accepted regression fixed.
  #
  #   regressions = Rackbench::Regressions.new(store)
  #   regressions.all(states: Regressions::OPEN)
  #   regressions.set(3, "accepted", by: "ko1", note: "the price of the new GC")
  class Regressions
    STATES = %w[detected confirmed fixed false_positive accepted].freeze
    OPEN = %w[detected confirmed].freeze
    # Who publish's own state changes are by.
    AUTOMATIC = "rackbench publish"

    COLUMNS = %i[id uid series experiment machine config_id dims figure detected_experiment_id step_experiment_id
                 good_experiment_id bad_experiment_id fixed_experiment_id direction change change_low change_high
                 level_before level_after threshold rule state state_by state_at state_note detected_at updated_at
                 announced_at document].freeze

    # A stored regression: its row's columns (JSON decoded) and events.
    Regression = Struct.new(*COLUMNS, :events, keyword_init: true) do
      def open? = OPEN.include?(state)
      def figure_words = Report::BatchFigures.fetch(figure).words
      def config_label = document.fetch("config_label", config_id)
      def automatic? = state_by == AUTOMATIC

      # The regression document (doc/output.md).
      def to_h
        { "id" => id, "uid" => uid, "experiment" => experiment, "machine" => machine, "config_id" => config_id,
          "config_label" => config_label, "dims" => dims, "figure" => figure, "figure_words" => figure_words,
          "direction" => direction, "change" => change, "change_interval" => change_low && [change_low, change_high],
          "level_before" => level_before, "level_after" => level_after, "threshold" => threshold, "rule" => rule,
          "state" => state, "state_words" => Regressions.words(state), "state_by" => state_by,
          "state_at" => Regressions.time(state_at), "state_note" => state_note,
          "detected_at" => Regressions.time(detected_at), "updated_at" => Regressions.time(updated_at),
          "announced_at" => Regressions.time(announced_at),
          "runs" => { "detected" => detected_experiment_id, "step" => step_experiment_id, "good" => good_experiment_id,
                      "bad" => bad_experiment_id, "fixed" => fixed_experiment_id },
          "range" => document["range"], "bisect" => document["bisect"],
          "events" => Array(events).map { |e| e.merge("at" => Regressions.time(e["at"])) } }
      end
    end

    # "false_positive" => "false positive".
    def self.words(state) = state.to_s.tr("_", " ")

    def self.time(value) = value&.utc&.iso8601

    # A state as typed ("false-positive", "False positive") => "false_positive".
    # Raises UsageError naming the states.
    def self.state(text)
      state = text.to_s.strip.downcase.tr(" -", "__")
      return state if STATES.include?(state)

      raise UsageError, "unknown state '#{text}' (states: #{STATES.map { |s| words(s).tr(" ", "-") }.join(", ")})"
    end

    # Who a person is when they give no --by: the user and the host.
    def self.default_by
      "#{Etc.getlogin || ENV.fetch("USER", "someone")}@#{Etc.uname[:nodename]}"
    end

    # store :: an open Store
    def initialize(store)
      @store = store
      @db = store.db
    end

    # Every regression, newest first; of +states+ only when given, of
    # experiment +experiment+ only when given.
    def all(states: nil, experiment: nil)
      dataset = @db[:regressions].reverse(:id)
      dataset = dataset.where(state: states) if states
      dataset = dataset.where(experiment: experiment) if experiment
      events = events_by_regression
      dataset.all.map { |row| regression(row, events[row[:id]]) }
    end

    # The regression with +id+; raises UsageError when there is none.
    def find(id)
      row = @db[:regressions].where(id: Integer(id, exception: false)).first
      raise UsageError, "no regression #{id} in #{@store.location} (rackbench regressions lists them)" unless row

      regression(row, @db[:regression_events].where(regression_id: row[:id]).order(:id).all.map { |e| event_h(e) })
    end

    # A person sets regression +id+'s state (Regressions.state), with a note.
    def set(id, state, by:, note: nil)
      regression = find(id)
      state = Regressions.state(state)
      now = Time.now
      @db.transaction do
        @db[:regressions].where(id: regression.id).update(state: state, state_by: by, state_at: now, state_note: note,
                                                          updated_at: now)
        event(regression.id, "state", state, by, note, now)
      end
      find(id)
    end

    # Keeps a bisect's result (its JSON document) with regression +id+.
    def attach_bisect(id, result, by:)
      regression = find(id)
      document = regression.document.merge("bisect" => result)
      now = Time.now
      @db.transaction do
        @db[:regressions].where(id: regression.id).update(document: JSON.generate(document), updated_at: now)
        event(regression.id, "bisect", regression.state, by, "bisect result attached", now)
      end
      find(id)
    end

    # Inserts a regression publish found (+columns+: COLUMNS but id, uid,
    # the times and the state's), detected (or refuted, when it was
    # already gone by its first publish) by publish; returns its id.
    def insert(columns, state:, note:)
      now = Time.now
      @db.transaction do
        id = @db[:regressions].insert(columns.merge(uid: "urn:uuid:#{SecureRandom.uuid}", state: state,
                                                    state_by: AUTOMATIC, state_at: now, state_note: note,
                                                    detected_at: now, updated_at: now,
                                                    document: JSON.generate(columns.fetch(:document, {}))))
        event(id, "detected", state, AUTOMATIC, note, now)
        id
      end
    end

    # Updates regression +id+'s figures (+columns+); with +state+, publish
    # moves it there (+note+ says why). +touch+ bumps its updated_at (the
    # feed shows it again): a state or a range that moved.
    def update(id, columns, state: nil, note: nil, touch: false)
      now = Time.now
      changes = columns.dup
      changes[:document] = JSON.generate(changes[:document]) if changes.key?(:document)
      changes.update(state: state, state_by: AUTOMATIC, state_at: now, state_note: note) if state
      changes[:updated_at] = now if state || touch
      @db.transaction do
        @db[:regressions].where(id: id).update(changes)
        event(id, "state", state, AUTOMATIC, note, now) if state
        event(id, "update", columns[:state] || current_state(id), AUTOMATIC, note, now) if touch && !state
      end
    end

    # Records that regression +id+ was announced (its command accepted it).
    def announced(id, note)
      now = Time.now
      @db.transaction do
        @db[:regressions].where(id: id).update(announced_at: now)
        event(id, "announced", current_state(id), AUTOMATIC, note, now)
      end
    end

    # {[series, detected experiment id] => Regression}: what publish
    # reconciles its steps with.
    def by_step
      all.to_h { |r| [[r.series, r.detected_experiment_id], r] }
    end

    private

    def current_state(id) = @db[:regressions].where(id: id).get(:state)

    def event(id, kind, state, by, note, at)
      @db[:regression_events].insert(regression_id: id, at: at, event: kind, state: state, by: by, note: note)
    end

    def events_by_regression
      @db[:regression_events].order(:id).all.group_by { |e| e[:regression_id] }
                             .transform_values { |rows| rows.map { |e| event_h(e) } }
    end

    def event_h(row)
      { "at" => row[:at], "event" => row[:event], "state" => row[:state], "by" => row[:by], "note" => row[:note] }
    end

    def regression(row, events)
      Regression.new(**row.slice(*COLUMNS), events: events || []).tap do |r|
        r.machine = JSON.parse(r.machine)
        r.dims = r.dims && JSON.parse(r.dims)
        r.document = r.document ? JSON.parse(r.document) : {}
      end
    end
  end
end

require_relative "regressions/tracker"
require_relative "regressions/terminal"
