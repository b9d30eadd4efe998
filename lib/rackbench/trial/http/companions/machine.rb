# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      module Companions
        # What else the machine did over the window (MachineLoad): the
        # record's +machine+, from which a busy machine's flag is raised.
        class Machine < Companion
          ORDER = 30

          # :machine :: returns a new #start / #stop like MachineLoad (default: MachineLoad.new)
          def initialize(setup, machine: -> { MachineLoad.new })
            super(setup)
            @machine = machine
          end

          def part(_scene)
            Part.new(@machine.call)
          end

          # One trial's snapshots of the machine.
          class Part < Companion::Part
            def initialize(load)
              super()
              @load = load
            end

            def window_started
              @load.start
            rescue Error, SystemCallError
              @load = nil # a sample that cannot be taken is left out, never the measurement
            end

            def window_ended
              @summary = @load&.stop
            rescue Error, SystemCallError
              @summary = nil
            end

            def keep(facts)
              facts[:machine] = @summary
            end
          end
        end

        Http.companion :machine, Machine
      end
    end
  end
end
