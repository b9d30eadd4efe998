# frozen_string_literal: true

module Rackbench
  class ServerProcess
    # Finds the line of a server's log that says what went wrong, so that a
    # failure reason quotes the error and not the last line of a backtrace.
    # A crashed Ruby prints the exception's message on the first line of
    # its report, then "from ..." frames; Rails and Puma wrap it in lines of
    # their own and print the frames after it.
    module LogError
      # "path:12:in `m': message (NameError)" or "Class::Name: message".
      ENDS_WITH_CLASS = /\((?:[A-Z]\w*::)*[A-Z]\w*\)\s*\z/
      STARTS_WITH_CLASS = /\A\s*(?:[A-Z]\w*::)*[A-Z]\w*(?:Error|Exception)\b:?\s/
      # A backtrace frame: "\tfrom file:12:in `m'", "file:12:in `m'".
      FRAME = /\A\s*(?:from\s+)?\S+:\d+:in\s/
      # What comes before the message on Ruby's first line: "file:12:in `m': ".
      LOCATION = /\A\S+:\d+:in [`'][^']*': /
      MAX_CHARS = 300

      module_function

      # The most telling line of text (a log's tail), or nil when it is
      # empty: the last line naming an exception class, without its source
      # location; else the last line that is not a backtrace frame.
      def line(text)
        lines = text.to_s.lines.map(&:rstrip).reject { |l| l.strip.empty? || l.start_with?("[rackbench]") }
        error = lines.reverse_each.find { |l| (l.include?(": ") && l.match?(ENDS_WITH_CLASS)) || l.match?(STARTS_WITH_CLASS) }
        chosen = error || lines.reverse_each.find { |l| !l.match?(FRAME) } || lines.last
        chosen && chosen.strip.sub(LOCATION, "")[0, MAX_CHARS]
      end
    end
  end
end
