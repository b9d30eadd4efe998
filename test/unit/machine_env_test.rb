# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "json"
require "rackbench/observe/machine_env"

describe Rackbench::MachineEnv do
  def fixtures(*parts) = File.join(File.expand_path("../fixtures/proc", __dir__), *parts)

  before do
    @tmp = Dir.mktmpdir("rackbench-env")
    @proc = File.join(@tmp, "proc")
    reset_proc
    @waits = []
    # Instead of sleeping, the window moves the fake /proc to its second
    # instant: processes that ended vanish, new ones and new counters appear.
    @wait = lambda do |seconds|
      @waits << seconds
      Dir.children(@proc).grep(/\A\d+\z/).each { |pid| FileUtils.rm_rf(File.join(@proc, pid)) }
      FileUtils.cp_r(fixtures("t1", "."), @proc)
    end
  end

  after { FileUtils.rm_rf(@tmp) }

  def capture(**options)
    defaults = { proc_root: @proc, sys_root: fixtures("sys"), etc_root: fixtures("etc"), wait: @wait, env: {} }
    Rackbench::MachineEnv.capture(**defaults, **options)
  end

  # The fake /proc at its first instant.
  def reset_proc
    FileUtils.rm_rf(@proc)
    FileUtils.cp_r(fixtures("t0"), @proc)
  end

  def stat_line(pid, name, ticks)
    "#{pid} (#{name}) R 1 #{pid} #{pid} 0 -1 0 0 0 0 0 #{ticks} 0 0 0 20 0 1 0 5 0 0\n"
  end

  def ticks_percent(ticks, window_s)
    (ticks.fdiv(Rackbench::MachineEnv::BusyProcesses.default_clk_tck) / window_s * 100).round(1)
  end

  describe ".capture" do
    it "reads the CPU, memory, load and OS from the fixture files" do
      before_s = Time.now.to_f - 0.001 # captured_at is to the millisecond
      env = capture
      after_s = Time.now.to_f
      assert_equal "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz", env[:cpu_model]
      assert_equal 2, env[:cpu_count]
      assert_equal [0, 1], env[:cpu_online]
      assert_equal 2500.0, env[:cpu_mhz]
      assert_equal false, env[:hypervisor]
      assert_equal "powersave", env[:governor]
      assert_equal "always", env[:transparent_hugepage]
      assert_equal "Debian GNU/Linux 12 (bookworm)", env[:os]
      assert_equal 16_384_000 * 1024, env[:memory_total_bytes]
      assert_equal 1_200_000 * 1024, env[:memory_available_bytes]
      assert_equal 2_097_148 * 1024, env[:swap_total_bytes]
      assert_equal (2_097_148 - 1_048_574) * 1024, env[:swap_used_bytes]
      assert_equal [1.5, 0.8, 0.4], env[:loadavg]
      assert_equal 5000.5, env[:uptime_s]
      assert_equal Etc.uname[:release], env[:kernel]
      assert_equal Etc.uname[:nodename], env[:hostname]
      assert_equal Rackbench::VERSION, env[:rackbench_version]
      assert_equal RUBY_DESCRIPTION, env[:ruby_description]
      assert_includes before_s..after_s, Time.iso8601(env[:captured_at]).to_f, "captured during the call"
      assert_equal env, JSON.parse(JSON.generate(env), symbolize_names: true), "every value survives JSON"
    end

    it "reports processes above 10% of a CPU over the window, busiest first" do
      env = capture(exclude_pids: [])
      assert_equal [Rackbench::MachineEnv::WINDOW_S], @waits
      busy = env[:busy_processes]
      assert_equal [100, 4242], busy.map { |p| p[:pid] }, "sshd (4%) is quiet; cc1 ended and make started inside the window"
      puma = busy.first
      assert_equal "puma 6.4 (app) x", puma[:name], "a name holding spaces and parentheses"
      assert_equal "puma 6.4.2 (tcp://0.0.0.0:3000) [app]", puma[:command]
      assert_equal ticks_percent(50, 0.5), puma[:cpu_percent]
      assert_equal ticks_percent(15, 0.5), busy.last[:cpu_percent]
      assert_equal "ruby -e loop {}", busy.last[:command]
    end

    it "leaves out excluded processes, by default itself" do
      assert_equal [100], capture(exclude_pids: [4242])[:busy_processes].map { |p| p[:pid] }

      own = File.join(@proc, Process.pid.to_s)
      wait = lambda do |seconds|
        @wait.call(seconds)
        FileUtils.mkdir_p(own)
        File.write(File.join(own, "stat"), stat_line(Process.pid, "ruby", 40))
      end
      busy_pids = lambda do |**options|
        reset_proc
        FileUtils.mkdir_p(own)
        File.write(File.join(own, "stat"), stat_line(Process.pid, "ruby", 0))
        capture(wait: wait, **options)[:busy_processes].map { |p| p[:pid] }
      end
      assert_equal [100, 4242], busy_pids.call
      assert_equal [100, Process.pid, 4242], busy_pids.call(exclude_pids: []), "80% sorts between 100% and 30%"
    end

    it "measures the window by the kernel's uptime, not the requested length" do
      env = capture(window_s: 2.0, exclude_pids: [])
      assert_equal [2.0], @waits
      assert_equal ticks_percent(50, 0.5), env[:busy_processes].first[:cpu_percent]
    end

    it "says unknown for the governor when /sys has no cpufreq, as in a VM" do
      sys = File.join(@tmp, "sys")
      FileUtils.mkdir_p(File.join(sys, "devices/system/cpu"))
      File.write(File.join(sys, "devices/system/cpu/online"), "0-3\n")
      env = capture(sys_root: sys)
      assert_equal "unknown", env[:governor]
      assert_equal "unknown", env[:transparent_hugepage]
      assert_equal 4, env[:cpu_count]
      assert Rackbench::MachineEnv.warnings(env).none? { |w| w.include?("governor") }
    end

    it "lists governors per CPU when they differ" do
      sys = File.join(@tmp, "sys")
      FileUtils.cp_r(fixtures("sys"), sys)
      File.write(File.join(sys, "devices/system/cpu/cpu0/cpufreq/scaling_governor"), "performance\n")
      env = capture(sys_root: sys)
      assert_equal({ "cpu0" => "performance", "cpu1" => "powersave" }, env[:governor])
      assert_includes Rackbench::MachineEnv.warnings(env).join("\n"), "governor is cpu1: powersave, not performance"
    end

    it "survives a machine with none of the files" do
      missing = File.join(@tmp, "nothing")
      env = Rackbench::MachineEnv.capture(proc_root: missing, sys_root: missing, etc_root: missing, wait: ->(_) {}, env: {})
      assert_equal "unknown", env[:cpu_model]
      assert_equal Etc.nprocessors, env[:cpu_count]
      assert_nil env[:loadavg]
      assert_nil env[:memory_total_bytes]
      assert_equal "unknown", env[:os]
      assert_equal "unknown", env[:governor]
      assert_equal [], env[:busy_processes]
      assert_equal [], Rackbench::MachineEnv.warnings(env)
    end

    it "records only allowlisted environment variables, never credentials" do
      env = capture(env: { "RUBYOPT" => "--yjit", "RUBY_GC_HEAP_INIT_SLOTS" => "10000", "LD_PRELOAD" => "libjemalloc.so.2",
                           "AWS_SECRET_ACCESS_KEY" => "secret", "BUNDLE_GITHUB__COM" => "token", "PATH" => "/bin" })
      assert_equal({ "LD_PRELOAD" => "libjemalloc.so.2", "RUBYOPT" => "--yjit", "RUBY_GC_HEAP_INIT_SLOTS" => "10000" },
                   env[:env_vars])
    end

    it "works on this machine's real /proc" do
      skip "no procfs" unless File.exist?("/proc/self/stat")
      env = Rackbench::MachineEnv.capture(window_s: 0.01, wait: ->(_) {})
      assert_operator env[:cpu_count], :>=, 1
      assert_equal 3, env[:loadavg].size
      assert_operator env[:memory_total_bytes], :>, 0
      refute_includes env[:busy_processes].map { |p| p[:pid] }, Process.pid
    end
  end

  describe ".warnings" do
    it "explains each sign of a noisy machine in one line" do
      warnings = Rackbench::MachineEnv.warnings(capture(exclude_pids: []))
      assert_equal 6, warnings.size, warnings.join("\n")
      assert_match(/\Aload average 1\.50 on 2 CPUs \(0\.75 per CPU, above 0\.5\)/, warnings[0])
      assert_match(/\Aprocess 100 \(puma 6\.4 \(app\) x\) used [\d.]+% of a CPU over 0\.5 s/, warnings[1])
      assert_match(/\Aprocess 4242 \(ruby\)/, warnings[2])
      assert_match(/\ACPU frequency governor is powersave, not performance/, warnings[3])
      assert_match(/\A1023 MiB of swap in use/, warnings[4])
      assert_match(/\Aonly 7% of memory is available \(1171 MiB\)/, warnings[5])
      warnings.each { |w| refute_includes w, "\n" }
    end

    it "reads an environment back from JSON (String keys) the same way" do
      env = capture(exclude_pids: [])
      assert_equal Rackbench::MachineEnv.warnings(env), Rackbench::MachineEnv.warnings(JSON.parse(JSON.generate(env)))
    end

    it "is silent on a quiet machine and just under each threshold" do
      quiet = {
        loadavg: [1.0, 1.0, 1.0], cpu_count: 2, busy_processes: [], governor: "performance",
        swap_used_bytes: Rackbench::MachineEnv::SWAP_USED_WARN_BYTES, memory_available_bytes: 100, memory_total_bytes: 1000
      }
      assert_equal [], Rackbench::MachineEnv.warnings(quiet)
      assert_equal 1, Rackbench::MachineEnv.warnings(quiet.merge(loadavg: [1.01, 0, 0])).size
      assert_equal 1, Rackbench::MachineEnv.warnings(quiet.merge(swap_used_bytes: Rackbench::MachineEnv::SWAP_USED_WARN_BYTES + 1)).size
      assert_equal 1, Rackbench::MachineEnv.warnings(quiet.merge(memory_available_bytes: 99)).size
      assert_equal 1, Rackbench::MachineEnv.warnings(quiet.merge(governor: "ondemand")).size
    end
  end

  describe Rackbench::MachineEnv::ProcFiles do

    it "parses kernel CPU lists" do
      assert_equal [0, 1, 2, 3, 6, 8, 9], Rackbench::MachineEnv::ProcFiles.cpu_list("0-3,6,8-9\n")
      assert_equal [0], Rackbench::MachineEnv::ProcFiles.cpu_list("0")
      assert_nil Rackbench::MachineEnv::ProcFiles.cpu_list("")
      assert_nil Rackbench::MachineEnv::ProcFiles.cpu_list("x-y")
    end

    it "parses a stat line whose name holds ') ' and rejects a truncated one" do
      line = "7 (a) b) S 1 7 7 0 -1 0 0 0 0 0 30 12 0 0 20 0 1 0 5 0 0\n"
      assert_equal ["a) b", 42], Rackbench::MachineEnv::ProcFiles.process_stat(line)
      assert_nil Rackbench::MachineEnv::ProcFiles.process_stat("7 (x) S 1 2")
      assert_nil Rackbench::MachineEnv::ProcFiles.process_stat(nil)
    end

    it "returns nil for malformed load and uptime files" do
      assert_nil Rackbench::MachineEnv::ProcFiles.loadavg("garbage")
      assert_nil Rackbench::MachineEnv::ProcFiles.loadavg("1 2 x")
      assert_nil Rackbench::MachineEnv::ProcFiles.uptime_s("")
      assert_nil Rackbench::MachineEnv::ProcFiles.uptime_s("abc 1")
    end
  end
end
