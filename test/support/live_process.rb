# frozen_string_literal: true

module Rackbench
  module Test
    # The one answer the tests give to "is this process still running?": it
    # exists (another user's too) and is no zombie, a process that has
    # ended and only waits for its parent to reap it. The stops under test
    # (a server's tree, a hook's group, a service) leave zombies behind
    # whenever their parent is slow to reap, which a busy machine makes
    # likely. The test supports ask it too, of the test process that made
    # a cluster or a namespace, before they remove what it left
    # (PostgresCluster.sweep, TestNetwork.sweep).
    module LiveProcess
      module_function

      def alive?(pid)
        entry = Rackbench::ProcessTree.read(pid)
        !entry.nil? && !entry.zombie?
      end
    end
  end
end
