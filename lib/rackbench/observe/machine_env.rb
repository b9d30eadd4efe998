# frozen_string_literal: true

require "etc"
require "time"
require_relative "../version"
require_relative "machine_env/proc_files"
require_relative "machine_env/busy_processes"

module Rackbench
  # What the machine looked like when an experiment started (CPU, governor,
  # kernel, memory, load, busy processes), stored with its results, and the
  # warnings that say it looks too noisy to measure on. Linux-first; on other
  # systems the /proc and /sys facts come back nil or "unknown".
  module MachineEnv
    # Warn when the 1-minute load average per online CPU exceeds this: above
    # it, on average half a core was already taken by something else.
    LOAD_PER_CPU_WARN = 0.5
    # Warn when more swap than this is in use. A few MiB of long-idle pages
    # are normal on a machine that has been up for days and cost nothing.
    SWAP_USED_WARN_BYTES = 16 * 1024 * 1024
    # Warn when less than this share of memory is available: a server (or
    # the page cache it relies on) may be squeezed.
    MEMORY_AVAILABLE_WARN_FRACTION = 0.1
    # How long busy processes are watched for, in seconds.
    WINDOW_S = 0.5
    # Environment variables of the runner worth recording: they change how
    # Ruby and servers behave. An allowlist, so credentials are never stored.
    ENV_VARS = %w[
      RUBYOPT RUBYLIB RUBY_YJIT_ENABLE RUBY_MN_THREADS LD_PRELOAD MALLOC_ARENA_MAX MALLOC_CONF
      JAVA_OPTS JRUBY_OPTS GEM_HOME GEM_PATH BUNDLE_GEMFILE BUNDLE_PATH
      RACK_ENV RAILS_ENV WEB_CONCURRENCY RAILS_MAX_THREADS
    ].freeze
    ENV_VAR_PATTERN = /\ARUBY_(GC|THREAD)_[A-Z0-9_]+\z/

    module_function

    # A Hash (Symbol keys, JSON-ready) describing this machine now; doc/store.md
    # lists the keys. Takes about +window_s+ to watch for busy processes.
    #
    # :proc_root :: where procfs is mounted (default: "/proc")
    # :sys_root :: where sysfs is mounted (default: "/sys")
    # :etc_root :: where os-release is found (default: "/etc")
    # :window_s :: how long to watch for busy processes (default: WINDOW_S)
    # :wait :: called with window_s between the two process snapshots;
    #          tests pass one that changes the fixture instead of sleeping
    #          (default: Kernel#sleep)
    # :exclude_pids :: processes never reported busy (default: this process)
    # :env :: the environment variables to pick ENV_VARS from (default: ENV)
    def capture(proc_root: "/proc", sys_root: "/sys", etc_root: "/etc", window_s: WINDOW_S,
                wait: ->(seconds) { sleep(seconds) }, exclude_pids: [Process.pid], env: ENV)
      before = BusyProcesses.snapshot(proc_root)
      wait.call(window_s)
      after = BusyProcesses.snapshot(proc_root)

      cpu = ProcFiles.cpuinfo(ProcFiles.read(File.join(proc_root, "cpuinfo")))
      memory = ProcFiles.meminfo(ProcFiles.read(File.join(proc_root, "meminfo")))
      online = online_cpus(sys_root)
      uname = Etc.uname
      {
        captured_at: Time.now.utc.iso8601(3),
        hostname: uname[:nodename],
        kernel: uname[:release],
        arch: uname[:machine],
        os: os_name(etc_root),
        cpu_model: cpu[:model],
        cpu_count: online&.size || (cpu[:processors].positive? ? cpu[:processors] : Etc.nprocessors),
        cpu_online: online,
        cpu_mhz: cpu[:mhz],
        hypervisor: cpu[:hypervisor],
        governor: governor(sys_root, online || []),
        transparent_hugepage: ProcFiles.sysfs_choice(
          ProcFiles.read(File.join(sys_root, "kernel/mm/transparent_hugepage/enabled"))
        ),
        memory_total_bytes: memory["MemTotal"],
        memory_available_bytes: memory["MemAvailable"] || memory["MemFree"],
        swap_total_bytes: memory["SwapTotal"],
        swap_used_bytes: memory["SwapTotal"] && memory["SwapFree"] && memory["SwapTotal"] - memory["SwapFree"],
        loadavg: ProcFiles.loadavg(ProcFiles.read(File.join(proc_root, "loadavg"))),
        uptime_s: after[:uptime_s],
        busy_window_s: window_s,
        busy_processes: BusyProcesses.between(before, after, window_s: window_s, exclude_pids: exclude_pids,
                                                             proc_root: proc_root),
        rackbench_version: Rackbench::VERSION,
        ruby_description: RUBY_DESCRIPTION,
        env_vars: env.to_h.select { |name, _| ENV_VARS.include?(name) || name.match?(ENV_VAR_PATTERN) }.sort.to_h
      }
    end

    # One line per reason to distrust measurements taken on the machine
    # +env+ describes (a capture result, with Symbol keys or, as read back
    # from the store, String keys). Empty when it looks quiet.
    def warnings(env)
      get = ->(key) { env.key?(key) ? env[key] : env[key.to_s] }
      [
        load_warning(get[:loadavg], get[:cpu_count]),
        *Array(get[:busy_processes]).map { |process| busy_warning(process, get[:busy_window_s]) },
        governor_warning(get[:governor]),
        swap_warning(get[:swap_used_bytes]),
        memory_warning(get[:memory_available_bytes], get[:memory_total_bytes])
      ].compact
    end

    def load_warning(loadavg, cpu_count)
      return nil unless loadavg && cpu_count.to_i.positive?

      per_cpu = loadavg.first.fdiv(cpu_count)
      return nil unless per_cpu > LOAD_PER_CPU_WARN

      format("load average %<load>.2f on %<cpus>d CPUs (%<per>.2f per CPU, above %<limit>.1f): " \
             "other work is running and will disturb the measurements",
             load: loadavg.first, cpus: cpu_count, per: per_cpu, limit: LOAD_PER_CPU_WARN)
    end

    def busy_warning(process, window_s)
      process = process.transform_keys(&:to_sym)
      window = window_s ? format(" over %.1f s", window_s) : ""
      "process #{process[:pid]} (#{process[:name]}) used #{process[:cpu_percent]}% of a CPU#{window} " \
        "before the experiment: it will compete with the server and the load engine"
    end

    def governor_warning(governor)
      slow = case governor
             when Hash then governor.reject { |_, g| %w[performance unknown].include?(g) }
                                    .map { |cpu, g| "#{cpu}: #{g}" }
             when nil, "performance", "unknown" then []
             else [governor]
             end
      return nil if slow.empty?

      "CPU frequency governor is #{slow.join(", ")}, not performance: clock speed may change between " \
        "trials (cpupower frequency-set -g performance)"
    end

    def swap_warning(swap_used_bytes)
      return nil unless swap_used_bytes && swap_used_bytes > SWAP_USED_WARN_BYTES

      "#{swap_used_bytes / (1024 * 1024)} MiB of swap in use: memory is tight and paging will distort latencies"
    end

    def memory_warning(available_bytes, total_bytes)
      return nil unless available_bytes && total_bytes.to_i.positive?
      return nil unless available_bytes < total_bytes * MEMORY_AVAILABLE_WARN_FRACTION

      format("only %<pct>d%% of memory is available (%<mib>d MiB): servers may be squeezed",
             pct: available_bytes * 100 / total_bytes, mib: available_bytes / (1024 * 1024))
    end

    # Online CPU numbers from sysfs, or nil when it does not say.
    def online_cpus(sys_root)
      ProcFiles.cpu_list(ProcFiles.read(File.join(sys_root, "devices/system/cpu/online")))
    end

    # The scaling governor common to every online CPU; a Hash of CPU name to
    # governor when they differ; "unknown" without cpufreq (as in most VMs).
    def governor(sys_root, cpus)
      by_cpu = cpus.to_h do |n|
        text = ProcFiles.read(File.join(sys_root, "devices/system/cpu/cpu#{n}/cpufreq/scaling_governor"))
        ["cpu#{n}", text ? text.strip : "unknown"]
      end
      values = by_cpu.values.uniq
      values.size == 1 ? values.first : (values.empty? ? "unknown" : by_cpu)
    end

    def os_name(etc_root)
      %w[os-release ../usr/lib/os-release].each do |name|
        pretty = ProcFiles.os_pretty_name(ProcFiles.read(File.join(etc_root, name)))
        return pretty if pretty
      end
      "unknown"
    end

    private_class_method :load_warning, :busy_warning, :governor_warning, :swap_warning, :memory_warning,
                         :online_cpus, :governor, :os_name
  end
end
