# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      module Companions
        # Profiled trials (`profile:`, Rackbench::Profile): the profiler's
        # gem in every bundle of the run, the profiler loaded into a profiled
        # trial's server processes (agent/profile.rb, listening to the
        # window's marks), and once the window ended their dumps collected
        # and merged (Profile::Collector), written into the results
        # directory (Profile::Files), and summed up in the record's
        # load_settings["profile"]: tool, mode, interval, trials, and
        #
        #   "file" => the merged profile, relative to the results directory
        #   "samples" => samples in all, "processes" => how many processes gave one
        #   "missing" => [{ "pid", "reason" }] of processes that gave none
        #
        # A profiled trial without any profile fails with the reason: its
        # measurement is not counted anyway, its profile is its point.
        class Profile < Companion
          ORDER = 80
          # Read by the launcher (bundle_env/launcher.rb): load agent/profile.rb.
          ENV_VAR = "RACKBENCH_PROFILE"

          # :collector :: called with the trial's directory, returns #collect like Profile::Collector
          #               (default: one)
          def initialize(setup, collector: ->(dir) { Rackbench::Profile::Collector.new(dir) })
            super(setup)
            @collector = collector
          end

          # A profiler that cannot run under one of the experiment's rubies
          # stops the run before anything is stored, naming the ruby.
          def check!
            return unless settings

            setup.context.variants.each_value do |variant|
              reason = settings.unsupported_reason(variant.install)
              raise ConfigError, "#{setup.source.source}: #{reason}" if reason
            end
          end

          def gem_lines
            settings&.gem_lines || []
          end

          def part(scene)
            return nil unless scene.profiled? && !scene.examining

            Part.new(scene, @collector, setup.context.results_dir)
          end

          private

          # The experiment's profile settings (Profile::Settings), or nil
          # when it profiles nothing or its source has no such key.
          def settings
            source = setup.source
            source.respond_to?(:profile) ? source.profile : nil
          end

          # One profiled trial.
          class Part < Companion::Part
            def initialize(scene, collector, results_dir)
              super()
              @trial = scene.trial
              @work_dir = scene.work_dir
              @collector = collector
              @results_dir = results_dir
            end

            # The profiler listens to the window too, whether or not the
            # counting agent runs.
            def env
              { "trial" => { WindowMarks::ENV_VAR => "1", ENV_VAR => @trial.profile.env_value } }
            end

            # A profiled trial says so in its settings (Profile.profiled?),
            # also when it fails: it never counts as a measured trial.
            def record_settings(settings)
              settings.merge("profile" => @trial.profile.to_h)
            end

            # The outcome with the profile's summary in its load_settings.
            def document(outcome)
              return outcome unless outcome[:status] == "ok"

              collected = @collector.call(@work_dir).collect
              mark = @trial.profile.to_h.merge("missing" => collected.missing)
              profile = collected.profile
              settings = outcome[:load_settings].merge("profile" => mark)
              if profile.nil? || profile.samples.zero?
                return outcome.merge(load_settings: settings, status: "failed",
                                     reason: "profiled trial: no server process gave samples (see the trial's log)")
              end

              mark.merge!("file" => Rackbench::Profile::Files.write(@results_dir, @trial.key, profile),
                          "samples" => profile.samples, "processes" => profile.processes.size)
              outcome.merge(load_settings: settings)
            rescue Rackbench::Profile::Error => e
              outcome.merge(load_settings: settings || outcome[:load_settings], status: "failed",
                            reason: "profiled trial: #{e.message}")
            end
          end
        end

        Http.companion :profile, Profile
      end
    end
  end
end
