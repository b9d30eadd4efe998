# frozen_string_literal: true

require "json"

module Rackbench
  module Trial
    class Script < Kind
      # How a script's run ended, from what it printed and its exit status:
      # the record's status, reason and result (its document). Pure
      # functions, no I/O.
      module Outcome
        TAIL_LINES = 5

        module_function

        # :output :: everything the process printed (stdout and stderr)
        # :format :: the document's "format" ("rackbench-micro-fibers")
        # :exit_status :: its Process::Status, or nil when it never started
        # :timed_out :: whether the deadline stopped it
        # :timeout_s :: that deadline
        def parse(output:, format:, exit_status:, timed_out:, timeout_s:)
          doc = document(output, format)
          reason = failure(doc, output, exit_status, timed_out, timeout_s)
          { status: reason ? "failed" : "ok", reason: reason, result: doc }
        end

        # The last line of output that is the script's document (among
        # whatever else the ruby printed: its own warnings go to the same
        # log), parsed; nil when there is none.
        def document(output, format)
          line = output.to_s.scan(/^\{"format":#{Regexp.escape(JSON.generate(format))}.*$/).last
          line && JSON.parse(line)
        rescue JSON::ParserError
          nil
        end

        # nil for a good run, else one line (plus the log's tail when the
        # script said nothing itself).
        def failure(doc, output, exit_status, timed_out, timeout_s)
          return "timed out after #{Kernel.format("%g", timeout_s)}s (stopped)" if timed_out
          return "exited #{describe(exit_status)} without a result: #{tail(output)}" unless doc
          return "unsupported: #{doc["reason"]}" if doc["status"] == "unsupported"
          return doc["reason"] || "status #{doc["status"].inspect}" unless doc["status"] == "ok"
          return "exited #{describe(exit_status)} after its result" unless exit_status&.success?

          nil
        end

        def describe(status)
          return "before starting" if status.nil?

          status.signaled? ? "on signal #{status.termsig}" : "with status #{status.exitstatus}"
        end

        def tail(output)
          lines = output.to_s.dup.force_encoding(Encoding::UTF_8).scrub.lines.map(&:rstrip).reject(&:empty?)
          lines.empty? ? "no output" : lines.last(TAIL_LINES).join(" | ")
        end
      end
    end
  end
end
