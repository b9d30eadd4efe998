# frozen_string_literal: true

require "fileutils"

module Rackbench
  # A request list (doc/requests.md) as a trial hands it to the engine.
  # When the app names the text its load path shows once logged in
  # (expect_session_body) and the list has no probe entry of its own, the
  # trial's copy gains one: every connection slot then proves its own
  # session at the window's start and after its end (the engine's
  # "probes"), instead of one connection replaying the login before the
  # run. The copy lives in the trial's directory, so its @users line is
  # made absolute.
  module RequestList
    PROBE_NAME = "session-probe"
    FILE_NAME = "requests.list"
    ENTRY_LINE = /^---(?:[ \t]|\r?$)/
    USERS_LINE = /^@users[ \t]+(.+?)[ \t\r]*$/

    module_function

    # The list the engine reads for a trial: +source+ itself, or its copy
    # in +dir+ with a probe entry requesting +probe_path+ that must show
    # +probe_body+ (when both are given and the list has no probe entry).
    def for_trial(source, dir:, probe_path:, probe_body:)
      text = File.read(source)
      return source if probe_body.nil? || probes?(text)

      FileUtils.mkdir_p(dir)
      path = File.join(dir, FILE_NAME)
      File.write(path, with_probe(absolute_users(text, File.dirname(File.expand_path(source))), probe_path, probe_body))
      path
    end

    # true when some entry of +text+ is a probe ("--- probe ...").
    def probes?(text)
      text.each_line.any? { |line| line.match?(ENTRY_LINE) && line.split.drop(1).include?("probe") }
    end

    # +text+ with its @users path (relative to +dir+) made absolute.
    def absolute_users(text, dir)
      text.gsub(USERS_LINE) { "@users #{File.expand_path(Regexp.last_match(1), dir)}" }
    end

    # +text+ and one probe entry: GET +path+, whose body must contain +body+.
    def with_probe(text, path, body)
      text = "#{text}\n" unless text.end_with?("\n")
      "#{text}\n--- probe name=#{PROBE_NAME}\n@expect status=2xx\n@expect body=#{body}\nGET #{path}\n"
    end

    # The slots that lost their session in a result with probes: nil when
    # every probed slot passed, else the failure reason of the trial
    # ("3 of 10 connection slots lost their session ...").
    def lost_sessions(probes)
      return nil unless probes.is_a?(Hash)

      start, finish = probes.values_at("start", "end")
      failed = [start, finish].map { |point| point["failed"].to_i }
      return nil if failed.sum.zero?

      slots = (Array(start["failed_slots"]) | Array(finish["failed_slots"])).sort
      reason = [start, finish].map { |point| point["reason"] }.compact.first
      format("%d of %d connection slots lost their session (failed probes: %d at the window's start, %d after " \
             "its end; slots %s): %s", [slots.size, *failed].max, probes["slots"].to_i, failed[0], failed[1],
             slots.first(10).join(", ") + (slots.size > 10 ? ", ..." : ""), reason)
    end
  end
end
