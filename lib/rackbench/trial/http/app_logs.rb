# frozen_string_literal: true

require "fileutils"

module Rackbench
  module Trial
    class Http < Kind
      # The app's own log files (everything under its log/ directory, e.g.
      # log/production.log), kept with the trial: their sizes are noted when
      # the server boots, and what was written from then to the server's stop
      # is copied into the trial's directory (app-logs/, same relative names).
      # A log that grew by more than MAX_BYTES keeps its last MAX_BYTES: the
      # end is where a failure is.
      class AppLogs
        MAX_BYTES = 5 * 1024 * 1024
        DIRECTORY = "app-logs"

        # Notes the size of every file under app_dir/log now.
        # :max_bytes :: how much of each log to keep at most (default: MAX_BYTES)
        def initialize(app_dir, max_bytes: MAX_BYTES)
          @root = File.join(app_dir, "log")
          @max_bytes = max_bytes
          @sizes = files.to_h { |name| [name, size(name)] }
        end

        # Copies what each log gained since boot into work_dir/app-logs/;
        # returns the copies' paths (only logs that grew). A log that was
        # replaced (rotated, truncated) since is copied from its start.
        def copy(work_dir)
          files.filter_map do |name|
            text = written(name)
            next if text.nil? || text.empty?

            dest = File.join(work_dir, DIRECTORY, name)
            FileUtils.mkdir_p(File.dirname(dest))
            File.binwrite(dest, text)
            dest
          end
        end

        # The error line of what the logs gained since boot (a line naming an
        # exception class, as ServerProcess::LogError picks it), with the log
        # it is in: "log/production.log: ActiveRecord::StatementInvalid: ...",
        # or nil when none names one.
        def error_line
          files.each do |name|
            text = written(name)
            next if text.nil? || text.empty?

            line = exception_line(plain(text))
            return "log/#{name}: #{line}" if line
          end
          nil
        end

        # A failure reason (+message+: its first line, then maybe a log's
        # tail) with the error the app's own log names appended to its first
        # line, when that line names no error of its own: a Rails app logs
        # its exceptions to log/production.log, not to the server's output.
        def reason(message)
          first, rest = message.split("\n", 2)
          return message if first.to_s.match?(/(?:Error|Exception)\b/)

          error = error_line
          return message unless error

          ["#{first}; app log #{error}", rest].compact.join("\n")
        end

        private

        def files
          return [] unless File.directory?(@root)

          Dir.glob("**/*", base: @root).select { |name| File.file?(File.join(@root, name)) }.sort
        rescue SystemCallError
          []
        end

        def size(name)
          File.size(File.join(@root, name))
        rescue SystemCallError
          0
        end

        # The bytes written since boot (the last max_bytes of them), or nil.
        def written(name)
          path = File.join(@root, name)
          from = @sizes.fetch(name, 0)
          length = File.size(path)
          from = 0 if length < from # replaced since boot
          from = [from, length - @max_bytes].max
          File.open(path, "rb") do |file|
            file.seek(from)
            file.read
          end
        rescue SystemCallError
          nil
        end

        # Rails' logger prefixes every line ("F, [2026-11-24T01:02:03.456 #12] FATAL -- : [request-id] "):
        # without them, an exception's line and its frames read as Ruby prints them.
        LOGGER_PREFIX = /^[A-Z], \[[^\]]*\]\s+[A-Z]+ -- [^:]*:\s?(?:\[[^\]]*\]\s?)*/

        def plain(text)
          text.force_encoding(Encoding::UTF_8).scrub.gsub(LOGGER_PREFIX, "")
        end

        # How Rails logs an exception: "ActiveRecord::StatementInvalid (message):".
        RAILS_EXCEPTION = /\A(?:[A-Z]\w*::)*[A-Z]\w* \(.*\):?\z/

        # The last line that names an exception as Rails logs it, else the
        # line ServerProcess::LogError picks when it names an error; nil otherwise.
        def exception_line(text)
          lines = text.lines.map(&:strip)
          rails = lines.reverse_each.find { |l| l.match?(RAILS_EXCEPTION) }
          return rails[0, ServerProcess::LogError::MAX_CHARS] if rails

          line = ServerProcess::LogError.line(text)
          line if line&.match?(/(?:Error|Exception)\b/)
        end
      end
    end
  end
end
