# frozen_string_literal: true

module Rackbench
  module Test
    # Whether a process exists: what the test supports ask of the test
    # process that made a cluster or a namespace before they remove what
    # it left (PostgresCluster.sweep, TestNetwork.sweep).
    module LiveProcess
      module_function

      def alive?(pid)
        Process.kill(0, pid)
        true
      rescue Errno::ESRCH
        false
      rescue Errno::EPERM
        true # exists, owned by someone else
      end
    end
  end
end
