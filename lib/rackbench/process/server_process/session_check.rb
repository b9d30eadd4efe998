# frozen_string_literal: true

require "tmpdir"

module Rackbench
  class ServerProcess
    # Proves, before measuring, that a request list's session works: the
    # load engine replays the list's +first+ entries (the login) on one
    # connection, then requests the app's load path, whose body must show
    # the session (an app's +expect_session_body+, e.g. "Signed in as").
    # A login refused (a 422 without the CSRF token, a 401), a token not
    # found, or a page that does not show the user fails the trial with
    # that reason instead of measuring anonymous pages (doc/apps.md).
    module SessionCheck
      # One connection for this long: enough for a login and a few pages of
      # most apps; every request still has the timeout below.
      DURATION_S = 2.0
      # A slow app may spend the whole run on its login (Redmine's first
      # pages after a boot on a busy machine take seconds each): when every
      # first entry answered but the load path was not reached, the check
      # runs again on a new connection for 4 times as long, up to this.
      MAX_DURATION_S = 32.0
      TIMEOUT_S = 10.0
      ENTRY_NAME = "session-check"

      module_function

      # Raises SetupError unless the session holds. Returns the LoadResult.
      #
      # :url :: the app's load URL (http://127.0.0.1:PORT/path)
      # :requests_file :: the request list whose first entries log in
      # :expect_body :: the text the page must contain once logged in
      # :headers, :cookie_presets :: the trial's load.headers and load.preset_cookies (default: none)
      # :ca_file :: an https:// URL's authority, as for the load (default: nil)
      # :engine :: the LoadEngine (default: a new one)
      def verify!(url:, requests_file:, expect_body:, headers: [], cookie_presets: [], ca_file: nil,
                  engine: LoadEngine.new)
        path = URI(url).request_uri
        Dir.mktmpdir("rackbench-session-check") do |dir|
          file = File.join(dir, "session-check.requests")
          text = RequestList.absolute_users(File.read(requests_file), File.dirname(File.expand_path(requests_file)))
          File.write(file, check_list(text, path, expect_body))
          duration_s = DURATION_S
          loop do
            settings = LoadSettings.build(url: url, connections: 1, threads: 1, duration_s: duration_s,
                                          timeout_s: TIMEOUT_S, requests_file: file, cookies: true,
                                          headers: headers, cookie_presets: cookie_presets, ca_file: ca_file)
            result = engine.run(settings)
            problem = problem(result, path, expect_body)
            return result unless problem
            raise SetupError, "session check failed: #{problem}" if duration_s >= MAX_DURATION_S || !unreached?(result)

            duration_s = [duration_s * 4, MAX_DURATION_S].min
          end
        end
      end

      # Whether the run ended before the load path was requested, every
      # first entry having answered: too short for the app, not a failure.
      def unreached?(result)
        *logins, check = result.entries
        logins.all? do |entry|
          entry["requests"].positive? && entry["errors"].values.none?(&:positive?) &&
            entry["status"].keys.all? { |code| code.to_i.between?(200, 399) }
        end &&
          check["requests"].zero? && check["errors"].values.none?(&:positive?)
      end

      # The list's @users line, its first entries, verbatim and in order,
      # then one entry that requests path and captures expect_body from its
      # body.
      def check_list(text, path, expect_body)
        chunks = text.split(/^(?=---(?:[ \t]|\r?$))/)
        users = chunks.first.start_with?("---") ? [] : chunks.first.lines.grep(RequestList::USERS_LINE)
        entries = chunks.select { |chunk| chunk.start_with?("---") }
        first = entries.select { |chunk| chunk.lines.first.split.drop(1).include?("first") }
        [*users.map { |line| line.end_with?("\n") ? line : "#{line}\n" },
         *first.map { |chunk| chunk.end_with?("\n") ? chunk : "#{chunk}\n" },
         "--- name=#{ENTRY_NAME}\n@capture session_check body regex=(#{ere_escape(expect_body)})\nGET #{path}\n"].join
      end

      # The first thing wrong, or nil: a first entry that failed (an error,
      # or a status other than 2xx/3xx), or a page without the text.
      def problem(result, path, expect_body)
        *logins, check = result.entries
        logins.each do |entry|
          bad = entry["status"].reject { |code, _| code.to_i.between?(200, 399) }
          errors = entry["errors"].select { |_, n| n.positive? }
          next if bad.empty? && errors.empty? && entry["requests"].positive?

          what = [*bad.map { |code, n| "status #{code} x #{n}" }, *errors.map { |kind, n| "#{kind} error x #{n}" }]
          what = ["no response"] if what.empty?
          return "first entry #{entry["name"] || "##{entry["index"]}"} got #{what.join(", ")}"
        end
        ok = check["requests"]
        failed = check["errors"]["capture"]
        return nil if ok.positive? && failed.zero?
        if ok.zero? && failed.zero?
          return "GET #{path} was not reached after the first entries (#{check["errors"].select { |_, n| n.positive? }}" \
                 "#{", in #{MAX_DURATION_S.round} s" if check["errors"].values.none?(&:positive?)})"
        end

        "GET #{path} after the first entries does not show #{expect_body.inspect} (#{failed} of #{ok + failed} pages)"
      end

      # expect_body as a POSIX extended regular expression matching it literally.
      def ere_escape(text)
        text.gsub(/[.\[\]{}()\\*+?^$|]/) { |c| "\\#{c}" }
      end
    end
  end
end
