# frozen_string_literal: true

module Rackbench
  class Report
    # The earlier attempts of an experiment's trials: failures that
    # `rackbench run --resume --retry-failed` ran again (Store::History).
    # Statistics read the latest attempt only; this says what came before
    # it, in every view: a line under the terminal table, per trial in the
    # JSON document ("earlier_attempts"), and `rackbench report --history`.
    class History
      # records :: the earlier attempts (Trial::Records, Store#earlier_attempts)
      def initialize(records)
        @by_key = records.group_by(&:key)
      end

      def empty?
        @by_key.empty?
      end

      # How many trials were retried, and how many earlier attempts are kept.
      def retried_trials = @by_key.size
      def earlier_attempts = @by_key.values.sum(&:size)

      # The earlier attempts of the trial with +key+, oldest first, as the
      # JSON document lists them (doc/output.md), or [].
      def for_key(key)
        (@by_key[key] || []).map { |record| attempt_hash(record) }
      end

      # "2 trials retried, 3 earlier failures kept (see rackbench report --history)", or nil.
      # Earlier attempts that were not failures (a fleet's batch run again
      # whole after its worker died) are counted as attempts.
      def summary_line
        return nil if empty?

        failed = @by_key.values.flatten.count { |r| r.status == "failed" }
        kept = if failed == earlier_attempts then count(earlier_attempts, "earlier failure")
               else "#{count(earlier_attempts, "earlier attempt")} (#{failed} failed)"
               end
        "#{count(retried_trials, "trial")} retried, #{kept} kept (see rackbench report --history)"
      end

      # Every earlier attempt, one line each: key, attempt, when and why.
      def to_text
        return "No trial was retried: there are no earlier attempts.\n" if empty?

        lines = [summary_line.sub(/ \(see .*\)\z/, ":")]
        @by_key.each do |key, records|
          records.each do |r|
            reason = r.reason.to_s.lines.first.to_s.strip
            log = r.log_path ? " (log: #{r.log_path})" : ""
            lines << "  #{key} attempt #{r.attempt} at #{r.started_at&.utc&.iso8601}#{" on #{r.host}" if r.host}: " \
                     "#{r.status}#{": #{reason}" unless reason.empty?}#{log}"
          end
        end
        "#{lines.join("\n")}\n"
      end

      private

      def attempt_hash(record)
        { "attempt" => record.attempt, "status" => record.status, "reason" => record.reason,
          "started_at" => record.started_at&.utc&.iso8601(6), "finished_at" => record.finished_at&.utc&.iso8601(6),
          "boot_s" => record.boot_s, "wall_s" => record.wall_s, "log_path" => record.log_path, "host" => record.host }
      end

      def count(number, singular)
        "#{number} #{singular}#{"s" unless number == 1}"
      end
    end
  end
end
