# frozen_string_literal: true

require "json"

module Rackbench
  module Micro
    # Maps one run of fibers_bench.rb onto a row of the trials table
    # (doc/store.md), the way the HTTP runner fills it, so that reports read
    # micro trials like any other. Pure functions, no I/O.
    #
    # rps :: messages/s of the measured round; requests :: its messages;
    # errors :: 0 (a single wrong or missing reply fails the whole trial);
    # measure_s, warmup_s :: the measured round and the warmup rounds;
    # boot_s :: the workers' setup (not the ruby's start); stop_s :: their
    # teardown; rss_peak_bytes :: VmHWM summed over master and workers;
    # pss_peak_bytes :: PSS summed over them at the end of the measured
    # round (the kernel keeps no PSS peak; that is when the benchmark holds
    # the most); engine_result :: the benchmark's whole JSON document.
    module TrialRecord
      # The benchmark's result line, among whatever else the ruby printed
      # (warnings of the interpreter itself go to the same log).
      DOCUMENT_LINE = /^\{"format":"rackbench-micro-fibers".*$/.freeze
      TAIL_LINES = 5

      module_function

      # What is known before the run: identity, configuration, layout.
      #
      # :trial :: a Plan::Trial
      # :variant :: its Rubies::Variant
      # :settings :: the Settings
      # :cpus :: CPUs the run is pinned to, or nil
      def base(trial:, variant:, settings:, cpus:)
        config = trial.config
        {
          key: trial.key, batch: trial.batch, position: trial.index, ruby: config.ruby,
          ruby_description: variant.description, server: config.mode, app: FIBERS_APP,
          processes: config.dims["processes"], threads: config.dims["threads"], dims: config.dims,
          load_settings: {
            "benchmark" => "fibers", "mode" => config.mode, "workers" => config.workers,
            "messages_per_worker" => config.messages, "warmup_rounds" => settings.warmup,
            "work_passes" => settings.work, "timeout_s" => settings.timeout_s
          },
          layout: { "server_cpus" => cpus, "engine_cpus" => nil }
        }
      end

      # The benchmark's command-line arguments for trial.
      def arguments(trial, settings)
        config = trial.config
        ["--mode", config.mode, "--workers", config.workers.to_s, "--messages", config.messages.to_s,
         "--warmup", settings.warmup.to_s, "--work", settings.work.to_s]
      end

      # The parsed result document in output (the run's log), or nil.
      def document(output)
        line = output.to_s.scan(DOCUMENT_LINE).last
        line && JSON.parse(line)
      rescue JSON::ParserError
        nil
      end

      # The attributes that depend on how the run ended: status, reason and
      # the measurements.
      #
      # :output :: everything the process printed (stdout and stderr)
      # :exit_status :: its Process::Status, or nil when it never started
      # :timed_out :: whether the deadline stopped it
      # :timeout_s :: that deadline
      def outcome(output:, exit_status:, timed_out:, timeout_s:)
        doc = document(output)
        measured = doc ? measurements(doc) : {}
        reason = failure(doc, output, exit_status, timed_out, timeout_s)
        return measured.merge(status: "ok", errors: 0, error_rate: 0.0) unless reason

        measured.merge(status: "failed", reason: reason, rps: nil, requests: nil)
      end

      def measurements(doc)
        {
          rps: doc["messages_per_s"], requests: doc["messages"], measure_s: doc["measured_s"],
          warmup_s: doc["warmup_s"], boot_s: doc["setup_s"], stop_s: doc["teardown_s"],
          rss_peak_bytes: doc["rss_peak_bytes"], pss_peak_bytes: doc["pss_end_bytes"], engine_result: doc
        }
      end

      # nil for a good run, else one line (plus the log's tail when the
      # benchmark said nothing itself).
      def failure(doc, output, exit_status, timed_out, timeout_s)
        return "timed out after #{format("%g", timeout_s)}s (stopped)" if timed_out
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
