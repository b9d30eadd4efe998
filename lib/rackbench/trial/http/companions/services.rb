# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      module Companions
        # The apps' services (`services:`, Rackbench::Services): checked
        # before anything is stored, started for the whole run before its
        # first trial and stopped after its last (Services::Started). In a
        # trial of an app that has them: their variables in the server,
        # their template restored before the server starts (the app's setup
        # then runs once), their trees sampled over the window, a service
        # that died failing the trial, and their documents kept in the
        # record (+services+) however the trial ended.
        class Services < Companion
          ORDER = 60

          # :services :: what starts the apps' services: #check!(apps) (raises ConfigError) and
          #              #start(apps, context:) returning what Services::Started.start returns (#for(app name)
          #              => Services::Group, #stop) (default: Services::Started)
          def initialize(setup, services: Rackbench::Services::Started)
            super(setup)
            @source = services
            @started = nil
          end

          # A service whose program is not installed, or (as root) whose
          # account does not exist, stops the run before anything is stored.
          def check!
            @source.check!(apps) unless apps.empty?
          end

          # The services started before the block (the run's trials) and
          # stopped after it, however it ends. A service that cannot start
          # raises SetupError in one line before any trial.
          def around_run
            return yield if apps.empty?

            @started = @source.start(apps, context: setup.context)
            begin
              yield
            ensure
              started = @started
              @started = nil
              started.stop
            end
          end

          def beside_server
            apps.empty? ? nil : "the services"
          end

          # A service's variables: the apps without the service prove they
          # run without it (rails-posts on SQLite has no DATABASE_URL).
          def watched_env
            apps.flat_map { |app| app.services.flat_map(&:env_names) }
          end

          def part(scene)
            group = @started&.for(scene.app.name)
            group && Part.new(group)
          end

          private

          # The run's apps that have services (resolved Apps), once.
          def apps
            @apps ||= if setup.source.respond_to?(:apps)
                        setup.source.apps.map { |spec| App.resolve(spec) }.reject { |app| app.services.empty? }
                      else
                        []
                      end
          end

          # One trial of an app with services (a Services::Group).
          class Part < Companion::Part
            def initialize(group)
              super()
              @group = group
              @group.begin_trial # the documents are this trial's restore and window only
            end

            def env
              { "services" => @group.env }
            end

            def keeps_app_state?
              @group.templated?
            end

            def before_spawn
              @group.prepare_trial!
            end

            def window_started
              @group.start
            rescue Error, SystemCallError
              nil # a sample that cannot be taken is left out, never the measurement
            end

            def window_ended
              @group.stop
            rescue Error, SystemCallError
              nil
            end

            def failure(when_text)
              @group.failure(when_text)
            end

            def finish(facts)
              facts[:services] = @group.documents
            end
          end
        end

        Http.companion :services, Services
      end
    end
  end
end
