# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      module Companions
        # The server's whole process tree sampled over exactly the window
        # (Sampler): memory, CPU and processes, the record's +sample+.
        class Sampler < Companion
          ORDER = 40

          # :sampler :: called with the booted ServerProcess, returns #start / #stop like Sampler
          #             (default: a Sampler of its tree)
          def initialize(setup, sampler: ->(server) { Rackbench::Sampler.new(server.pid, pgid: server.pgid) })
            super(setup)
            @sampler = sampler
          end

          def part(_scene)
            Part.new(@sampler)
          end

          # One trial's sampler, made once its server booted.
          class Part < Companion::Part
            def initialize(factory)
              super()
              @factory = factory
            end

            def after_boot(booted)
              @sampler = @factory.call(booted.server)
            end

            def window_started
              @sampler&.start
            rescue Error, SystemCallError
              @sampler = nil # a sample that cannot be taken is left out, never the measurement
            end

            def window_ended
              @summary = @sampler&.stop
            rescue Error, SystemCallError
              @summary = nil
            end

            def keep(facts)
              facts[:sample] = @summary
            end
          end
        end

        Http.companion :sampler, Sampler
      end
    end
  end
end
