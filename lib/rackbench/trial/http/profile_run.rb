# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # A profiled trial's profile, once its window has ended and before
      # its server stops: the server processes' dumps collected and merged
      # (Profile::Collector), written into the results directory
      # (Profile::Files), and summed up in the record's
      # load_settings["profile"]: tool, mode, interval, trials, and
      #
      #   "file" => the merged profile, relative to the results directory
      #   "samples" => samples in all, "processes" => how many processes gave one
      #   "missing" => [{ "pid", "reason" }] of processes that gave none
      #
      # A profiled trial without any profile fails with the reason: its
      # measurement is not counted anyway, its profile is its point.
      class ProfileRun
        # Read by the launcher (bundle_env/launcher.rb): load agent/profile.rb.
        ENV_VAR = "RACKBENCH_PROFILE"

        # :collector :: called with the trial's directory, returns #collect like Profile::Collector (default: one)
        def initialize(trial, work_dir, results_dir, collector: ->(dir) { Profile::Collector.new(dir) })
          @trial = trial
          @work_dir = work_dir
          @results_dir = results_dir
          @collector = collector
        end

        # The LoadRun's outcome (the record's fields) with the profile's
        # summary in its load_settings.
        def add_to(outcome)
          return outcome unless outcome[:status] == "ok"

          collected = @collector.call(@work_dir).collect
          mark = @trial.profile.to_h.merge("missing" => collected.missing)
          profile = collected.profile
          settings = outcome[:load_settings].merge("profile" => mark)
          if profile.nil? || profile.samples.zero?
            return outcome.merge(load_settings: settings, status: "failed",
                                 reason: "profiled trial: no server process gave samples (see the trial's log)")
          end

          mark.merge!("file" => Profile::Files.write(@results_dir, @trial.key, profile), "samples" => profile.samples,
                      "processes" => profile.processes.size)
          outcome.merge(load_settings: settings)
        rescue Profile::Error => e
          outcome.merge(load_settings: settings || outcome[:load_settings], status: "failed",
                        reason: "profiled trial: #{e.message}")
        end
      end
    end
  end
end
