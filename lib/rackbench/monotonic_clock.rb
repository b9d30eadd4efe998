# frozen_string_literal: true

module Rackbench
  # `now` in seconds on the monotonic clock, for classes that time things:
  # durations that NTP steps and wall-clock changes cannot bend.
  module MonotonicClock
    private

    def now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end
  end
end
