# frozen_string_literal: true

require_relative "monotonic_clock"

module Rackbench
  # The files a server's processes write one each into the trial's
  # directory (agent/: identity reports, the counting agent's counts, a
  # profiler's dumps), named by their pid, and the wait for them: a process
  # writes its file on a thread of its own, which a busy machine may wake
  # late, so the runner waits until no process owes one, up to a deadline,
  # and then names those that gave none.
  module AgentFiles
    extend MonotonicClock

    # A file is written whole and renamed, but a busy machine may still be
    # on its way to the rename: looking again this often costs nothing.
    POLL_INTERVAL_S = 0.02

    module_function

    # pid => path of every file "<pid><suffix>" in dir (suffix: ".json",
    # ".counts.json"); names that do not start with a pid are not agents'.
    def by_pid(dir, suffix)
      Dir.glob(File.join(dir, "*#{suffix}")).each_with_object({}) do |path, found|
        pid = Integer(File.basename(path, suffix), exception: false)
        found[pid] = path if pid
      end
    end

    # Calls the block, which looks at the files and returns what is still
    # owed (an Array: the processes that wrote nothing yet), until it
    # returns an empty one or deadline_s has passed since the first look;
    # returns the block's last answer. The block's own variables keep the
    # rest of what it saw.
    def wait(deadline_s:, poll_s: POLL_INTERVAL_S)
      deadline = now + deadline_s
      loop do
        owed = yield
        return owed if owed.empty? || now >= deadline

        sleep poll_s
      end
    end
  end
end
