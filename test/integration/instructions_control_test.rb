# frozen_string_literal: true

require "test_helper"

# What runs valgrind and talks to it, with the commands faked: the wrapper
# a server runs under (Instructions::Valgrind), vgdb switching every
# process at an edge (Control), the edges never raising on the engine's
# phase thread (Edges), and the refusal of a ruby valgrind cannot run,
# asked once and kept (Support).
describe "instructions: valgrind, vgdb and the refusal" do
  # A runner that records each argv and env, answering +answer+ (a
  # Child::Result, or a Proc given the argv).
  def runner(answer)
    calls = []
    run = lambda do |argv, env:, timeout_s:|
      calls << [argv, env, timeout_s]
      answer.is_a?(Proc) ? answer.call(argv) : answer
    end
    [run, calls]
  end

  def status(code)
    Process::Status.wait(Process.spawn(RbConfig.ruby, "-e", "exit #{code}"))
  end

  def ok(output = "")
    Rackbench::Rubies::Child::Result.new(status: status(0), output: output, timed_out: false)
  end

  describe Rackbench::Instructions::Valgrind do
    it "runs a server under callgrind with instrumentation off, following forks and execs, its files per process" do
      valgrind = Rackbench::Instructions::Valgrind.new(program: "/usr/bin/valgrind", vgdb: "/usr/bin/vgdb")
      assert_nil valgrind.reason
      assert_equal ["/usr/bin/valgrind", "--tool=callgrind", "--instr-atstart=no", "--trace-children=yes", "--vgdb=yes",
                    "--vgdb-prefix=/t/instructions/vgdb", "--callgrind-out-file=/t/instructions/callgrind.%p",
                    "--log-file=/t/instructions/valgrind.%p.log", "--dump-line=no"], valgrind.wrapper("/t/instructions")
      assert Rackbench::Instructions::Valgrind.tool_exe?("/usr/libexec/valgrind/callgrind-amd64-linux")
      refute Rackbench::Instructions::Valgrind.tool_exe?("/usr/bin/ruby3.1")
      refute Rackbench::Instructions::Valgrind.tool_exe?(nil)
    end

    it "says what is missing" do
      assert_match(/valgrind is not installed/, Rackbench::Instructions::Valgrind.new(program: nil, vgdb: nil).reason)
      assert_match(/vgdb is not installed/, Rackbench::Instructions::Valgrind.new(program: "/v", vgdb: nil).reason)
      assert_match(/not installed/, Rackbench::Instructions::Valgrind.find(path: "/nonexistent").reason)
    end
  end

  describe Rackbench::Instructions::Control do
    # A prefix whose FIFOs name the processes as valgrind does:
    # PREFIX-from-vgdb-to-PID-by-USER-on-HOST ("???" for none).
    def fifos(dir, names)
      names.each { |pid, user_host| File.write(File.join(dir, "vgdb-from-vgdb-to-#{pid}-by-#{user_host}"), "") }
      File.join(dir, "vgdb")
    end

    it "sends each process its commands through vgdb, under the names its own FIFO carries" do
      Dir.mktmpdir do |dir|
        prefix = fifos(dir, 11 => "???-on-???", 12 => "root-on-???", 13 => "bench-user-on-box")
        run, calls = runner(ok)
        control = Rackbench::Instructions::Control.new(vgdb: "/usr/bin/vgdb", prefix: prefix, runner: run, alive: ->(_) { true })
        control.on([11, 12, 13])
        control.off_and_dump([11])
        by_pid = calls.to_h { |argv, env, _| [argv[2], [argv, env]] }
        assert_equal ["/usr/bin/vgdb", "--vgdb-prefix=#{prefix}", "--pid=12", "-c", "instrumentation on"], by_pid["--pid=12"][0]
        path = ENV.fetch("PATH", "/usr/bin:/bin")
        assert_equal({ "PATH" => path, "LOGNAME" => "root" }, by_pid["--pid=12"][1])
        assert_equal({ "PATH" => path, "LOGNAME" => "bench-user", "HOST" => "box" }, by_pid["--pid=13"][1])
        assert_equal ["/usr/bin/vgdb", "--vgdb-prefix=#{prefix}", "--pid=11", "-c", "instrumentation off", "-c", "dump"],
                     calls.last[0]
        assert_equal({ "PATH" => path }, calls.last[1])
      end
    end

    it "names every live process that did not answer, one that timed out, and passes over one that is gone" do
      Dir.mktmpdir do |dir|
        prefix = fifos(dir, 11 => "???-on-???", 12 => "???-on-???")
        failing = Rackbench::Rubies::Child::Result.new(status: status(1), output: "vgdb error: no FIFO found\n", timed_out: false)
        run, = runner(->(argv) { argv.include?("--pid=12") ? failing : ok })
        control = Rackbench::Instructions::Control.new(vgdb: "vgdb", prefix: prefix, runner: run, alive: ->(_) { true })
        error = assert_raises(Rackbench::Instructions::Error) { control.on([11, 12]) }
        assert_equal "valgrind: process 12 did not take 'instrumentation on' (vgdb: vgdb error: no FIFO found)",
                     error.message
        gone = Rackbench::Instructions::Control.new(vgdb: "vgdb", prefix: prefix, runner: run, alive: ->(pid) { pid != 12 })
        gone.on([11, 12, 14]) # 12 exited while vgdb talked to it; 14 never had a FIFO and is gone
        run, = runner(Rackbench::Rubies::Child::Result.new(status: status(1), output: nil, timed_out: true))
        control = Rackbench::Instructions::Control.new(vgdb: "vgdb", prefix: prefix, runner: run, timeout_s: 3,
                                                       alive: ->(_) { true })
        assert_match(/no answer within 3 s\) \(and 1 more\)/,
                     assert_raises(Rackbench::Instructions::Error) { control.on([11, 12]) }.message)
      end
    end
  end

  describe Rackbench::Instructions::Edges do
    it "keeps a failure for after the engine instead of raising on its phase thread, and skips the end edge" do
      Dir.mktmpdir do |proc_dir| # a /proc with no process at all
        edges = Rackbench::Instructions::Edges.new(server: Struct.new(:pid, :pgid).new(99_999, 99_999),
                                                   control: Object.new, proc_dir: proc_dir)
        edges.started
        edges.ended
        assert_equal "no process of the server runs under valgrind", edges.failure
      end
    end
  end

  describe Rackbench::Instructions::Support do
    let(:install) do
      Rackbench::Rubies::Install.new(name: "ruby", path: RbConfig.ruby, source: :path, engine: "ruby", version: "3.1.2",
                                     ruby_version: "3.1.0", description: "ruby 3.1.2", jit: ["yjit"])
    end
    let(:yjit) { Rackbench::Rubies::Variant.new(install: install, name: "ruby-yjit", options: ["--yjit"]) }
    let(:valgrind) { Rackbench::Instructions::Valgrind.new(program: "/usr/bin/valgrind", vgdb: "/usr/bin/vgdb") }
    let(:crash) do
      Rackbench::Rubies::Child::Result.new(status: status(1), timed_out: false,
                 output: "/usr/lib/ruby/vendor_ruby/rubygems.rb:17: [BUG] Segmentation fault at 0x0000000000000000\n" \
                         "ruby 3.1.2p20\n\n-- Control frame information --\n")
    end

    it "refuses a variant that crashes under valgrind, naming Ruby's [BUG] line, and keeps the answer" do
      Dir.mktmpdir do |cache|
        run, calls = runner(crash)
        support = Rackbench::Instructions::Support.new(valgrind: valgrind, cache_dir: cache, runner: run)
        reason = support.reason(yjit, env: { "PATH" => "/usr/bin" })
        assert_equal "ruby-yjit cannot run under valgrind (--instr-atstart=no): /usr/lib/ruby/vendor_ruby/rubygems.rb:17: " \
                     "[BUG] Segmentation fault at 0x0000000000000000 (exit status 1)", reason
        argv = calls.first.first
        assert_equal ["/usr/bin/valgrind", "--tool=callgrind", "--instr-atstart=no"], argv.first(3)
        assert_equal [RbConfig.ruby, "--yjit", "-e"], argv[-4, 3]
        # Kept: another run asks no valgrind again.
        again, calls_again = runner(ok)
        assert_equal reason, Rackbench::Instructions::Support.new(valgrind: valgrind, cache_dir: cache, runner: again)
                                                             .reason(yjit, env: { "PATH" => "/usr/bin" })
        assert_empty calls_again
      end
    end

    it "accepts a variant whose script ran and printed its answer, with instrumentation off and on" do
      run, calls = runner(ok("#{Rackbench::Instructions::Support::EXPECTED}\n"))
      support = Rackbench::Instructions::Support.new(valgrind: valgrind, runner: run)
      assert_nil support.reason(yjit, env: {})
      assert_equal %w[--instr-atstart=no --instr-atstart=yes], calls.map { |argv, _, _| argv[2] }
      assert_nil support.reason(yjit, env: {}), "asked once per run"
      assert_equal 2, calls.size
    end

    it "keeps no answer of a probe that timed out, and refuses JRuby and a missing valgrind outright" do
      Dir.mktmpdir do |cache|
        run, = runner(Rackbench::Rubies::Child::Result.new(status: status(1), output: nil, timed_out: true))
        support = Rackbench::Instructions::Support.new(valgrind: valgrind, cache_dir: cache, runner: run)
        assert_match(/no answer within/, support.reason(yjit, env: {}))
        assert_empty Dir.children(cache)
      end
      jruby = Rackbench::Rubies::Variant.new(install: Rackbench::Rubies::Install.new(
        name: "jruby", path: RbConfig.ruby, source: :path, engine: "jruby", version: "9.3", ruby_version: "2.6.8",
        description: "jruby 9.3", jit: []
      ))
      run, calls = runner(ok)
      assert_match(/a JVM's instructions, not Ruby's/,
                   Rackbench::Instructions::Support.new(valgrind: valgrind, runner: run).reason(jruby, env: {}))
      missing = Rackbench::Instructions::Valgrind.new(program: nil, vgdb: nil)
      assert_match(/not installed/, Rackbench::Instructions::Support.new(valgrind: missing, runner: run).reason(yjit, env: {}))
      assert_empty calls
    end
  end
end
