# frozen_string_literal: true

module Rackbench
  # Whether a process with this pid exists (signal 0): one that belongs to
  # another user exists too (EPERM); nil or a pid that is gone does not.
  module PidAlive
    def self.call(pid)
      return false unless pid

      Process.kill(0, Integer(pid))
      true
    rescue Errno::ESRCH
      false
    rescue Errno::EPERM
      true
    end
  end
end
