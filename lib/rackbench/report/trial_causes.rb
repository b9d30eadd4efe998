# frozen_string_literal: true

module Rackbench
  class Report
    # The likely cause of what a trial's engine result shows, in words a
    # reader can act on: why connections went unserved, why warmup requests
    # failed. Pure functions of a TrialEntry (its record and engine result);
    # Flags words its messages with them.
    module TrialCauses
      module_function

      # The unserved connection slots of +trial+'s window: {"kind" =>
      # "connections" or "streams", "slots", "active", "served",
      # "unserved", "max_wait_us"}, or nil when every active slot was served
      # (or the result predates the count).
      def unserved(trial)
        service = trial.engine["service"]
        return nil unless service.is_a?(Hash)

        %w[connections streams].each do |kind|
          counts = service[kind]
          next unless counts.is_a?(Hash) && counts["unserved"].to_i.positive?

          return counts.merge("kind" => kind)
        end
        nil
      end

      # Why the server left connection (or stream) slots unserved: the
      # server's own way of serving connections where it is known, else
      # what usually causes it.
      def unserved_cause(trial, counts)
        record = trial.record
        settings = trial.engine["settings"] || {}
        if counts["kind"] == "streams"
          limit = trial.engine.dig("h2", "server_max_concurrent_streams")
          return "the server allows #{limit} concurrent streams per connection (SETTINGS_MAX_CONCURRENT_STREAMS), " \
                 "fewer than load.streams #{settings["streams"]}" if limit && limit < settings["streams"].to_i

          return "the server left those streams waiting past the timeout"
        end
        threads = record.threads.to_i
        if record.server.to_s.start_with?("webrick") && settings.fetch("keepalive", true)
          return "WEBrick serves one keep-alive connection per thread (#{threads} thread#{"s" unless threads == 1}): " \
                 "give it load.connections <= threads, or keepalive: false"
        end
        capacity = record.processes.to_i * threads
        if capacity.positive? && capacity < counts["active"].to_i
          return "more connections than the server serves at once (#{record.processes} x #{threads} = #{capacity}) " \
                 "waited past the #{Units.seconds(settings["timeout_s"].to_f, digits: 1)} timeout: lower load.connections " \
                 "or raise the server's threads"
        end
        "the server left them waiting past the #{Units.seconds(settings["timeout_s"].to_f, digits: 1)} timeout"
      end

      # What probably made +trial+'s warmup requests fail, judged from
      # which requests failed and how (warmup: the record's warmup Hash).
      def warmup_errors_cause(trial, warmup)
        entries = Array(trial.entries)
        login = entries.find { |e| e["first"] && failed_in_warmup?(e) }
        return "the login (first entry #{login["name"] || "##{login["index"]}"}) failed" if login

        errors = warmup["errors"].select { |_, n| n.to_i.positive? }
        bad = warmup["status"].reject { |code, _| code.to_i.between?(200, 399) }
        unserved = unserved(trial)
        if errors.keys == ["timeout"] && bad.empty?
          return "#{unserved["unserved"]} of #{unserved["active"]} connections were never answered: " \
                 "#{unserved_cause(trial, unserved)}" if unserved && unserved["kind"] == "connections"

          return "requests waited past the timeout while the server warmed up (slow first requests, or more " \
                 "connections than it serves at once)"
        end
        return "responses did not show what their @expect says" if errors.key?("expect")
        return "a capture found nothing (a page without its token?)" if errors.key?("capture")
        return "the server refused or dropped connections" if errors.key?("connect") || errors.key?("read")
        return "the app answered #{bad.keys.sort.join(", ")} (see its log)" unless bad.empty?

        "requests failed while the server warmed up"
      end

      def failed_in_warmup?(entry)
        w = entry["warmup"] || {}
        w.fetch("status", {}).any? { |code, n| !code.to_i.between?(200, 399) && n.to_i.positive? } ||
          w.fetch("errors", {}).any? { |_, n| n.to_i.positive? }
      end
    end
  end
end
