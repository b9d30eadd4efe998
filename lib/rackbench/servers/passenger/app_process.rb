# Loaded (ruby -r) into the ruby processes Passenger spawns for a trial,
# before rackbench's launcher: in every app process that Passenger's
# preloader forks, says so on stdout, which Passenger copies into its log
# ("App 1234 output: [rackbench] passenger app process 1234 forked from
# the preloader"). The preloader has loaded the app before it forks, so
# each line is one app process with the app loaded: readiness waits for P
# of them (Servers::Passenger#ready_log). Passenger logs nothing of its own
# when it has spawned a process, and its process tree holds short-lived
# helpers (spawn-env-setupper) that a count of processes would mistake
# for app processes.
#
# Runs inside the measured server, under every benchmarked CRuby: no gem,
# and it never raises into the server.
module RackbenchPassengerAppProcess
  LINE = "[rackbench] passenger app process %d forked from the preloader".freeze

  def self.forked
    $stdout.puts(format(LINE, Process.pid))
    $stdout.flush
  rescue StandardError
    nil
  end

  # Ruby 3.1+: every fork goes through Process._fork.
  module ForkHook
    def _fork
      pid = super
      RackbenchPassengerAppProcess.forked if pid.zero?
      pid
    end
  end

  # Older rubies: Passenger's preloader calls Kernel#fork without a block
  # (nil in the child).
  module LegacyForkHook
    def fork(&block)
      return super { RackbenchPassengerAppProcess.forked; block.call } if block

      pid = super
      RackbenchPassengerAppProcess.forked if pid.nil?
      pid
    end
  end
end

if Process.respond_to?(:_fork)
  Process.singleton_class.prepend(RackbenchPassengerAppProcess::ForkHook)
else
  Process.singleton_class.prepend(RackbenchPassengerAppProcess::LegacyForkHook)
  Kernel.prepend(RackbenchPassengerAppProcess::LegacyForkHook)
end
