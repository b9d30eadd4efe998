# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      module Companions
        # The window's marks (WindowMarks): the server's processes learn of
        # each edge from them, and their own clocks time what they count
        # (the inside agent, a profiler).
        class Window < Companion
          # After the switches (valgrind's instrumentation), before the
          # samplers: a process's counts start once it is switched on.
          ORDER = 20

          def part(scene)
            Part.new(scene.window)
          end

          # One trial's marks.
          class Part < Companion::Part
            def initialize(window)
              super()
              @window = window
            end

            def window_started
              mark(:start)
            end

            def window_ended
              mark(:end)
            end

            private

            # A mark that cannot be written leaves the processes without
            # their counts (recorded as missing), never the trial without its
            # measurement.
            def mark(edge)
              @window.mark(edge)
            rescue SystemCallError
              nil
            end
          end
        end

        Http.companion :window, Window
      end
    end
  end
end
