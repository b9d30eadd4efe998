# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # The measured window's two edges as the load engine reaches them
      # (its --phase-fd: :measure, then :end), told to a trial's companions'
      # parts in their order (the switches, the marks, the samplers), so
      # that every sampler's window is exactly the engine's. Used by LoadRun
      # and Trial::Ws's run alike.
      class WindowEdges
        # parts :: the trial's Companions::Parts
        def initialize(parts)
          @parts = parts
          # The engine's phases arrive on a thread of its own; an interrupt
          # may end the window from the caller's.
          @lock = Mutex.new
          @window = nil # :started, then :ended
        end

        # The engine's phase callback: the window starts, the window ends.
        def on_phase(phase)
          case phase
          when :measure then edge(:start)
          when :end then edge(:end)
          end
        end

        # Ends the window if it started and has not ended: a run that ended
        # inside it (an error, an interrupt).
        def end!
          edge(:end)
        end

        private

        # Each edge once, and the end only after the start: every part in
        # its order. A part that raises loses its own figure, never the
        # others' nor the measurement.
        def edge(which)
          @lock.synchronize do
            if which == :start
              next if @window

              @window = :started
              each_part(:window_started)
            elsif @window == :started
              @window = :ended
              each_part(:window_ended)
            end
          end
        end

        def each_part(hook)
          @parts.each do |part|
            part.public_send(hook)
          rescue Error, SystemCallError
            nil
          end
        end
      end
    end
  end
end
