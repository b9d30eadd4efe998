# frozen_string_literal: true

module Rackbench
  # An exclusive flock whose holder writes who it is into the lock file, so
  # that a process waiting on it can say whom it waits for, since when, and
  # where that process's log is: the lock on a ruby's gem directory (two
  # runs install gems one after the other), on a ruby being built from
  # source, on Passenger's agent being compiled.
  module HolderLock
    # How often a waiting process says it is still waiting.
    NOTICE_INTERVAL_S = 30.0
    POLL_INTERVAL_S = 0.2

    # Who holds the lock, as it wrote into the lock file: its pid, when it
    # took the lock (a Time) and its log; each nil when unknown (a lock
    # file from an older rackbench holds the pid only).
    Holder = Struct.new(:pid, :since, :log, keyword_init: true) do
      # The holder described by a lock file's text: "pid\nsince (Unix seconds)\nlog\n".
      def self.parse(text)
        pid, since, log = text.to_s.lines.map(&:strip)
        new(pid: pid&.match?(/\A\d+\z/) ? pid.to_i : nil,
            since: since&.match?(/\A\d+\z/) ? Time.at(since.to_i) : nil,
            log: log.nil? || log.empty? ? nil : log)
      end
    end

    # Takes the lock on lock (an open File), calling waiting with the
    # Holder and the seconds waited so far while another process holds
    # it: at once, then every NOTICE_INTERVAL_S; then writes this
    # process's pid, the time and log into the file for the next one.
    def self.acquire(lock, waiting:, log:)
      unless lock.flock(File::LOCK_EX | File::LOCK_NB)
        holder = Holder.parse(lock.read)
        started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        next_notice = 0.0
        until lock.flock(File::LOCK_EX | File::LOCK_NB)
          waited = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
          if waited >= next_notice
            waiting&.call(holder, waited)
            next_notice += NOTICE_INTERVAL_S
          end
          sleep POLL_INTERVAL_S
        end
      end
      lock.truncate(0)
      lock.rewind
      lock.write("#{Process.pid}\n#{Time.now.to_i}\n#{log}\n")
      lock.flush
    end
  end
end
