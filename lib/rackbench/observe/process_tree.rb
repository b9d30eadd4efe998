# frozen_string_literal: true

module Rackbench
  # A server's processes, read from /proc (Linux): the root, every
  # descendant, and every member of the root's process group. Both are
  # needed: a server's workers may leave its group (Pitchfork's do), and a
  # group member may be reparented away from the root when its parent dies.
  #
  # Every method takes :proc_dir (default: "/proc") so tests can point it at
  # a fake /proc tree.
  module ProcessTree
    PROC_DIR = "/proc"

    # One process, from /proc/PID/stat. Times are in clock ticks
    # (Etc.sysconf(Etc::SC_CLK_TCK) per second); cutime and cstime are the
    # times of the children it has waited for (each child's own and its
    # waited-for children's, added when it is reaped); start_ticks counts
    # from boot, rss_pages is the kernel's resident page count.
    Entry = Struct.new(:pid, :ppid, :pgrp, :state, :utime_ticks, :stime_ticks, :cutime_ticks, :cstime_ticks,
                       :threads, :start_ticks, :rss_pages, keyword_init: true) do
      # A zombie has exited and holds no memory; only its exit status waits
      # to be collected by its parent.
      def zombie?
        state == "Z" || state == "X"
      end

      # pid plus start time: a process identity that survives PID reuse.
      def key
        [pid, start_ticks]
      end
    end

    module_function

    # The root and its descendants and group members that have not exited,
    # root first, then by PID. Empty when none is left.
    #
    # :pgid :: the process group to include (default: root_pid, the group
    #          a server spawned with pgroup: true leads, even after it died)
    # :table :: a #scan result to reuse instead of reading /proc again
    # :zombies :: include processes that exited but are not yet reaped (default: false)
    # :proc_dir :: where /proc is (default: "/proc")
    def entries(root_pid, pgid: root_pid, table: nil, zombies: false, proc_dir: PROC_DIR)
      table ||= scan(proc_dir: proc_dir)
      members = descendants_and_group(table, root_pid, pgid)
      members.reject!(&:zombie?) unless zombies
      members.sort_by { |entry| [entry.pid == root_pid ? 0 : 1, entry.pid] }
    end

    # The PIDs of #entries (same options).
    def pids(root_pid, **options)
      entries(root_pid, **options).map(&:pid)
    end

    # Every process: { pid => Entry }. Processes that vanish while being
    # read are left out.
    def scan(proc_dir: PROC_DIR)
      Dir.children(proc_dir).each_with_object({}) do |name, table|
        next unless name.match?(/\A\d+\z/)

        entry = read(name.to_i, proc_dir: proc_dir)
        table[entry.pid] = entry if entry
      end
    end

    # The real path of the executable pid runs (its /proc/PID/exe), or nil
    # when it cannot be read (gone, or another user's).
    def exe(pid, proc_dir: PROC_DIR)
      File.realpath(File.join(proc_dir, pid.to_s, "exe"))
    rescue SystemCallError
      nil
    end

    # The Entry of one process, or nil when it does not exist (any more).
    def read(pid, proc_dir: PROC_DIR)
      parse_stat(File.read(File.join(proc_dir, pid.to_s, "stat")))
    rescue Errno::ENOENT, Errno::ESRCH, Errno::EACCES, Errno::EINVAL
      nil
    end

    # Parses one /proc/PID/stat line (see proc(5)); nil when malformed. The
    # command name is in parentheses and may itself contain spaces and
    # parentheses, so the fields are counted from the last ")".
    def parse_stat(line)
      open = line.index("(")
      close = line.rindex(")")
      return nil unless open && close && close > open

      fields = line[(close + 1)..].split
      return nil if fields.size < 22

      Entry.new(pid: line[0...open].to_i, state: fields[0], ppid: fields[1].to_i, pgrp: fields[2].to_i,
                utime_ticks: fields[11].to_i, stime_ticks: fields[12].to_i, cutime_ticks: fields[13].to_i,
                cstime_ticks: fields[14].to_i, threads: fields[17].to_i,
                start_ticks: fields[19].to_i, rss_pages: fields[21].to_i)
    end

    # Breadth-first from the root and the group members through the
    # parent -> children links.
    def descendants_and_group(table, root_pid, pgid)
      children = Hash.new { |hash, key| hash[key] = [] }
      table.each_value { |entry| children[entry.ppid] << entry }
      queue = table.values.select { |entry| entry.pid == root_pid || (pgid && entry.pgrp == pgid) }
      seen = {}
      until queue.empty?
        entry = queue.shift
        next if seen.key?(entry.pid)

        seen[entry.pid] = entry
        queue.concat(children[entry.pid])
      end
      seen.values
    end
    private_class_method :descendants_and_group
  end
end
