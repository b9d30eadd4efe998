# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      module Inside
        # The record's +inside+ document from the processes' counts files
        # and the engine's window (pure functions). The per-request figures
        # are derived from it by the report, never stored: see "The inside
        # document" in doc/output.md for the rate formula.
        module Document
          # The keys of a process's counts that are stored (what the agent
          # writes; anything else in a file is left out).
          PROCESS_KEYS = %w[pid ppid role started_at_s ended_at_s duration_s gc allocated_objects vm yjit memory].freeze
          ROLES = %w[single master worker].freeze

          module_function

          # :counts :: the counts the processes wrote (Hashes as parsed, each #valid?)
          # :missing :: [{ "pid" =>, "reason" => }] for processes that gave none
          # :requests :: the engine's responses in its window
          # :duration_s :: the engine's window
          def build(counts:, missing:, requests:, duration_s:)
            {
              "agent" => COUNTING,
              "window" => { "requests" => requests, "duration_s" => duration_s },
              "processes" => counts.map { |c| c.slice(*PROCESS_KEYS) }.sort_by { |c| c["pid"] },
              "missing" => missing.sort_by { |m| m["pid"] }
            }
          end

          # A counts file the agent wrote: a pid, a role, a positive duration.
          def valid?(counts)
            counts.is_a?(Hash) && counts["pid"].is_a?(Integer) && ROLES.include?(counts["role"]) &&
              counts["duration_s"].is_a?(Numeric) && counts["duration_s"].positive?
          end
        end
      end
    end
  end
end
