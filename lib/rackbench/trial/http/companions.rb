# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # The companions (Companion): each one's file in companions/, the
      # run's roster of them, one trial's parts.
      module Companions
        DIRECTORY = File.expand_path("companions", __dir__)

        # Requires every file of companions/: each registers itself, so a
        # new companion is one file.
        def self.load_all
          Dir[File.join(DIRECTORY, "*.rb")].sort.each { |path| require path }
        end

        # The run's companions (one Companion each, in their order) and, per
        # trial, their parts (Parts). Trial::Http holds one.
        class Roster
          attr_reader :all

          # factories :: name => a Companion class, or a Proc, called with setup
          # setup :: the Companion::Setup every companion is built with
          def initialize(factories, setup)
            built = factories.map do |name, factory|
              [name, factory.respond_to?(:new) ? factory.new(setup) : factory.call(setup)]
            end
            @all = built.sort_by { |name, companion| [companion.class.order, name.to_s] }.map(&:last).freeze
          end

          def check!
            @all.each(&:check!)
          end

          # Runs the block inside every companion's around_run.
          def around_run(&block)
            @all.reverse.reduce(block) { |inner, companion| -> { companion.around_run(&inner) } }.call
          end

          # The first companion's reason config cannot run on variant, or
          # nil, asked last first: the costliest answer (valgrind's probe
          # of a ruby, the first companion's) only when no other refuses.
          def unsupported_reason(config, variant)
            @all.reverse_each do |companion|
              reason = companion.unsupported_reason(config, variant)
              return reason if reason
            end
            nil
          end

          def beside_server
            @all.filter_map(&:beside_server)
          end

          def watched_env
            @all.flat_map(&:watched_env)
          end

          def gem_lines
            @all.flat_map(&:gem_lines)
          end

          # The parts the companions play in the trial of scene.
          def parts(scene)
            Parts.new(@all.filter_map { |companion| companion.part(scene) })
          end
        end

        # The parts of one trial, in their companions' order: each hook is
        # called on every part.
        class Parts
          include Enumerable

          def initialize(parts)
            @parts = parts.freeze
          end

          def each(&)
            @parts.each(&)
          end

          # The server's variables of layer ("trial", "services") from every part.
          def env(layer)
            @parts.map { |part| part.env.fetch(layer, {}) }.reduce({}, :merge)
          end

          def launch_prefix
            @parts.flat_map(&:launch_prefix)
          end

          def ready_timeout_s(native_s)
            @parts.reduce(native_s) { |timeout_s, part| part.ready_timeout_s(timeout_s) }
          end

          def engine_settings(settings)
            @parts.reduce(settings) { |given, part| part.engine_settings(given) }
          end

          def record_settings(settings)
            @parts.reduce(settings) { |given, part| part.record_settings(given) }
          end

          def target_port
            @parts.filter_map(&:target_port).first
          end

          def keeps_app_state?
            @parts.any?(&:keeps_app_state?)
          end

          # The first part's reason the measurement cannot count, or nil.
          def failure(when_text)
            @parts.each do |part|
              reason = part.failure(when_text)
              return reason if reason
            end
            nil
          end

          def document(outcome)
            @parts.reduce(outcome) { |given, part| part.document(given) }
          end

          # Calls hook on every part, with args.
          def call(hook, *args)
            @parts.each { |part| part.public_send(hook, *args) }
          end

          # Stops every part, the last first; each is tried however the one
          # after it ended, and the first error is raised once all were.
          def stop(facts)
            errors = @parts.reverse.filter_map do |part|
              part.stop(facts)
              nil
            rescue StandardError, Interrupt => e
              e
            end
            raise errors.first if errors.any?
          end

          # Finishes every part, as #stop does.
          def finish(facts)
            errors = @parts.reverse.filter_map do |part|
              part.finish(facts)
              nil
            rescue StandardError => e
              e
            end
            raise errors.first if errors.any?
          end
        end
      end
    end
  end
end
