# frozen_string_literal: true

module Rackbench
  module Services
    # The services of one run, each app's started before the run's first
    # trial and stopped when it ends (Trial::Http#around_run): they live
    # for the whole run, and every trial starts from their template
    # (Group#prepare_trial!). Why for the run and not per trial: the
    # template is the state after the app's setup (a Rails app's migrations
    # and seeds take seconds to minutes), initdb alone takes seconds, and a
    # restore from the template gives each trial the same data in a
    # fraction of a second; the service's own warm state (its shared
    # buffers, Redis's allocator) is what a deployed app meets too, and
    # each trial's warmup comes before its window (doc/services.md).
    class Started
      # Checks, before anything runs, that every service of apps can start
      # here: its programs installed and, when rackbench runs as root, its
      # account there. Raises ConfigError naming the app and the service.
      #
      # :euid :: this process's effective uid (default: Process.euid)
      def self.check!(apps, euid: Process.euid)
        apps.each do |app|
          Array(app.services).each do |spec|
            kind = Services.fetch(spec.name)
            reason = kind.missing_reason
            raise ConfigError, "app #{app.name}: #{reason}" if reason

            Account.for(kind.account_name, euid: euid, title: kind.title)
          rescue SetupError => e
            raise ConfigError, "app #{app.name}: service #{spec.name}: #{e.message}"
          end
        end
      end

      # Starts the services of every app in apps (Apps with services;
      # others are left out), in order; returns the Started. On a failure,
      # stops what was started and raises SetupError (one line).
      #
      # :context :: the run's Trial::Context (layout, marker, logs, deadlines, out)
      # :launcher :: called with Launch.new's keywords, returns an object whose #start returns a Running
      #              (default: Launch.new)
      # :workspace :: returns the run's Workspace (default: Workspace.create)
      def self.start(apps, context:, launcher: Launch.method(:new), workspace: -> { Workspace.create })
        started = new(workspace.call, context: context, launcher: launcher)
        begin
          apps.each { |app| started.start_app(app) }
        rescue StandardError, Interrupt
          started.stop
          raise
        end
        started
      end

      def initialize(workspace, context:, launcher:)
        @workspace = workspace
        @context = context
        @launcher = launcher
        @groups = {}
      end

      # The Group of the app labelled app_name, or nil (an app without services).
      def for(app_name)
        @groups[app_name]
      end

      def empty?
        @groups.empty?
      end

      # Starts app's services (nothing for an app without any, or one
      # already started); a failure stops those of app that started.
      def start_app(app)
        return if Array(app.services).empty? || @groups.key?(app.name)

        running = []
        begin
          app.services.each do |spec|
            running << (service = launch(app, spec))
            @context.out.puts "  service #{spec.name} of #{app.name}: #{service.kind.title} #{service.kind.version} " \
                              "on #{service.endpoint} as #{spec.env_name} (ready in #{format("%.1f", service.boot_s)} s)"
          end
        rescue StandardError, Interrupt
          stop_quietly(Group.new(app.name, running))
          raise
        end
        @groups[app.name] = Group.new(app.name, running)
      end

      # Stops every app's services and removes their directory; raises the
      # first failure once everything was tried.
      def stop
        errors = @groups.values.reverse.filter_map do |group|
          group.stop_processes
          nil
        rescue SetupError => e
          e
        end
        @workspace.remove
        raise errors.first if errors.any?
      end

      private

      # Stops group while another error is on its way (that one is the
      # one to report).
      def stop_quietly(group)
        group.stop_processes
      rescue SetupError
        nil
      end

      def launch(app, spec)
        log = File.join(@context.logs_dir, "service-#{app.name}-#{spec.name}.log".gsub(/[^\w.-]/, "_"))
        @launcher.call(kind: Services.fetch(spec.name), spec: spec, app_name: app.name, workspace: @workspace,
                       layout: @context.layout, marker_env: @context.marker_env, log_path: log,
                       ready_timeout_s: @context.ready_timeout_s, stop_grace_s: @context.stop_grace_s).start
      end
    end
  end
end
