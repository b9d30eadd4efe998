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
      # Why a fixed count and no window: the check is a handful of requests
      # on one connection, and a busy machine or a slow app (Redmine's first
      # pages after a boot take seconds each) can outrun any window chosen
      # in advance. The engine's fixed-count mode ends when each request has
      # its response or its error, so the only deadline left is the
      # per-request timeout below, which follows the app's own first answer.
      #
      # A request slower than this many times the app's first response
      # (the app check's GET of the load path, the first thing the booted
      # server answered, compiling its views on the way) counts as lost,
      # as Calibration::TIMEOUT_FACTOR does for a trial's requests.
      TIMEOUT_FACTOR = 10
      # Never below this: a login may cost more than the page the app check
      # fetched (a password hash, a session row written).
      MIN_TIMEOUT_S = 10.0
      ENTRY_NAME = "session-check"

      module_function

      # Raises SetupError unless the session holds. Returns the LoadResult.
      #
      # :url :: the app's load URL (http://127.0.0.1:PORT/path)
      # :requests_file :: the request list whose first entries log in
      # :expect_body :: the text the page must contain once logged in
      # :headers, :cookie_presets :: the trial's load.headers and load.preset_cookies (default: none)
      # :ca_file :: an https:// URL's authority, as for the load (default: nil)
      # :first_response_s :: how long the app took to answer its first request (the app check), whose
      #                      multiple is each request's timeout (default: nil: MIN_TIMEOUT_S)
      # :timeout_s :: the experiment's own load.timeout, the least each request is given (default: nil)
      # :engine :: the LoadEngine (default: a new one)
      def verify!(url:, requests_file:, expect_body:, headers: [], cookie_presets: [], ca_file: nil,
                  first_response_s: nil, timeout_s: nil, engine: LoadEngine.new)
        path = URI(url).request_uri
        Dir.mktmpdir("rackbench-session-check") do |dir|
          file = File.join(dir, "session-check.requests")
          text = RequestList.absolute_users(File.read(requests_file), File.dirname(File.expand_path(requests_file)))
          list = check_list(text, path, expect_body)
          File.write(file, list)
          # The first entries once each (a session survives the server
          # closing its connection: doc/requests.md), then the load path once.
          count = list.scan(/^--- /).size
          settings = LoadSettings.build(url: url, connections: 1, threads: 1, count: count,
                                        timeout_s: request_timeout_s(first_response_s, timeout_s),
                                        requests_file: file, cookies: true, headers: headers,
                                        cookie_presets: cookie_presets, ca_file: ca_file)
          result = engine.run(settings)
          problem = problem(result, path, expect_body)
          raise SetupError, "session check failed: #{problem}" if problem

          result
        end
      end

      # Each request's timeout in seconds: TIMEOUT_FACTOR times the app's
      # first response, at least MIN_TIMEOUT_S and the experiment's own
      # timeout, rounded up to a tenth of a second.
      def request_timeout_s(first_response_s, timeout_s)
        scaled_s = first_response_s ? (TIMEOUT_FACTOR * first_response_s * 10).ceil / 10.0 : 0.0
        [MIN_TIMEOUT_S, scaled_s, timeout_s.to_f].max
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
          errors = check["errors"].select { |_, n| n.positive? }
          return "GET #{path} was not reached after the first entries#{" (#{errors})" unless errors.empty?}"
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
