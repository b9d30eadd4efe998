# frozen_string_literal: true

module Rackbench
  # What else the machine did during one trial's measured window: the CPU
  # used by processes that are not this run's (not the runner, not its
  # server, not its load engine), from two snapshots of /proc/*/stat. The
  # machine warnings printed at the start say how the machine looked
  # then; this says, per trial, whether something competed with the
  # measurement, so a configuration measured while the machine was busy
  # carries a flag (Report::Flags "busy_machine").
  #
  # Kernel threads are left out: on loopback most of their work
  # (softirq, ksoftirqd) is this trial's own network traffic.
  class MachineLoad
    # Other processes using more than this share of one CPU, summed, in
    # percent, make the trial "busy". Idle daemons together stay far below.
    BUSY_PERCENT = 10.0
    # The busiest other processes kept with the trial, to name the culprit.
    KEEP_PROCESSES = 3
    KTHREADD_PID = 2

    # :proc_root :: where /proc is (default: "/proc")
    # :runner_pid :: this process (default: Process.pid)
    def initialize(proc_root: "/proc", runner_pid: Process.pid)
      @proc_root = proc_root
      @runner_pid = runner_pid
    end

    # Takes the first snapshot (the start of the window).
    def start
      @before = MachineEnv::BusyProcesses.snapshot(@proc_root)
      @loadavg_start = loadavg
      self
    end

    # Takes the second snapshot and returns what happened in between:
    # {"other_cpu_percent", "busy" (above BUSY_PERCENT), "busiest" (the
    # top processes: pid, name, command, cpu_percent), "loadavg_start",
    # "loadavg_end", "window_s"}; nil if #start was not called.
    def stop
      return nil unless @before

      after = MachineEnv::BusyProcesses.snapshot(@proc_root)
      others = MachineEnv::BusyProcesses.between(@before, after, exclude_pids: ours_and_kernel,
                                                                 threshold_percent: 0.0, proc_root: @proc_root)
      total = others.sum { |process| process[:cpu_percent] }.round(1)
      window = after[:uptime_s] && @before[:uptime_s] && (after[:uptime_s] - @before[:uptime_s]).round(2)
      {
        "other_cpu_percent" => total, "busy" => total > BUSY_PERCENT,
        "busiest" => others.first(KEEP_PROCESSES).map { |p| p.transform_keys(&:to_s) },
        "loadavg_start" => @loadavg_start, "loadavg_end" => loadavg, "window_s" => window
      }
    end

    private

    # The runner, everything it started (server trees, the engine), and
    # the kernel's threads.
    def ours_and_kernel
      table = ProcessTree.scan(proc_dir: @proc_root)
      children = Hash.new { |h, k| h[k] = [] }
      table.each_value { |entry| children[entry.ppid] << entry.pid }
      ours = [@runner_pid]
      queue = [@runner_pid]
      until queue.empty?
        kids = children[queue.shift]
        ours.concat(kids)
        queue.concat(kids)
      end
      kernel = table.each_value.select { |e| e.pid == KTHREADD_PID || e.ppid == KTHREADD_PID }.map(&:pid)
      ours + kernel
    end

    def loadavg
      MachineEnv::ProcFiles.loadavg(MachineEnv::ProcFiles.read(File.join(@proc_root, "loadavg")))
    end
  end
end
