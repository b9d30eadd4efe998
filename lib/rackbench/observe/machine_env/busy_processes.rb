# frozen_string_literal: true

require "etc"
require_relative "proc_files"

module Rackbench
  module MachineEnv
    # Finds the processes that use CPU while nothing should: two snapshots of
    # every /proc/PID/stat a short window apart, and the CPU time each
    # process used in between.
    module BusyProcesses
      # A process using more than this share of one CPU, in percent, is busy.
      # Idle daemons stay well below it; anything above competes with the
      # server or the load engine for a core.
      THRESHOLD_PERCENT = 10.0
      COMMAND_MAX_CHARS = 120

      module_function

      # { uptime_s: Float or nil, ticks: { pid => [name, cpu ticks] } } for
      # every process under +proc_root+ at this instant.
      def snapshot(proc_root)
        pids = begin
          Dir.children(proc_root).grep(/\A\d+\z/)
        rescue SystemCallError
          []
        end
        ticks = {}
        pids.each do |pid|
          # A process may exit between the listing and the read: skip it.
          stat = ProcFiles.process_stat(ProcFiles.read(File.join(proc_root, pid, "stat")))
          ticks[Integer(pid, 10)] = stat if stat
        end
        { uptime_s: ProcFiles.uptime_s(ProcFiles.read(File.join(proc_root, "uptime"))), ticks: ticks }
      end

      # The processes that used more than +threshold_percent+ of one CPU
      # between snapshots +before+ and +after+, busiest first, as Hashes
      # { pid:, name:, command:, cpu_percent: }. Processes present in only
      # one snapshot are left out (they started or ended inside the window).
      #
      # :window_s :: elapsed time to assume when the snapshots' uptimes do
      #              not tell it (default: nil, then no process is reported)
      # :exclude_pids :: pids never reported, e.g. the runner itself (default: [])
      # :threshold_percent :: (default: THRESHOLD_PERCENT)
      # :proc_root :: where to read each busy process's command line (default: "/proc")
      # :clk_tck :: kernel ticks per second (default: sysconf(_SC_CLK_TCK))
      def between(before, after, window_s: nil, exclude_pids: [], threshold_percent: THRESHOLD_PERCENT,
                  proc_root: "/proc", clk_tck: default_clk_tck)
        # The uptime delta is the elapsed time as the kernel counted it, so a
        # late wake-up from the wait cannot inflate the percentages.
        elapsed_s = after[:uptime_s] && before[:uptime_s] && after[:uptime_s] - before[:uptime_s]
        elapsed_s = window_s unless elapsed_s&.positive?
        return [] unless elapsed_s&.positive?

        busy = after[:ticks].filter_map do |pid, (name, ticks)|
          next if exclude_pids.include?(pid)
          next unless (earlier = before[:ticks][pid])

          percent = (ticks - earlier[1]).fdiv(clk_tck) / elapsed_s * 100
          next unless percent > threshold_percent

          { pid: pid, name: name, command: command(proc_root, pid, name), cpu_percent: percent.round(1) }
        end
        busy.sort_by { |process| -process[:cpu_percent] }
      end

      # The process's command line, shortened, or its name when unreadable
      # (kernel threads have an empty one).
      def command(proc_root, pid, name)
        text = ProcFiles.read(File.join(proc_root, pid.to_s, "cmdline")).to_s.tr("\0", " ").strip
        text.empty? ? name : text[0, COMMAND_MAX_CHARS]
      end

      def default_clk_tck
        Etc.sysconf(Etc::SC_CLK_TCK) || 100
      rescue StandardError, NotImplementedError
        100
      end
    end
  end
end
