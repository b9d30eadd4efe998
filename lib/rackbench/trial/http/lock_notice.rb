# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # The notice a run prints while another run holds the install lock
      # of a ruby's gem directory: who, since when, where its log is (to
      # follow it with tail -f), and, later, how long this run has waited.
      module LockNotice
        # holder :: a HolderLock::Holder; waited_s :: seconds waited so far
        # :ruby :: the ruby's name; :lock :: the lock file's path
        def self.text(holder, waited_s, ruby:, lock:)
          who = holder&.pid ? "pid #{holder.pid}" : "another process"
          since = holder&.since ? " since #{holder.since.utc.strftime("%H:%M:%S")} UTC" : ""
          log = holder&.log ? "its log: #{holder.log}" : "lock: #{lock}"
          if waited_s < BundleEnv::LOCK_NOTICE_INTERVAL_S
            "Waiting for #{who}, which has been installing gems for #{ruby}#{since} (#{log})"
          else
            "Still waiting for #{who} to finish installing gems for #{ruby} (#{waited_s.round} s so far; #{log})"
          end
        end
      end
    end
  end
end
