# frozen_string_literal: true

require "test_helper"
require "fileutils"

# Memory, GC and JIT variants (doc/rubies.md, "Memory, GC and JIT
# variants"): how each is named, refused and checked, without booting a
# server. test/integration/memory_variants_test.rb runs them for real.
describe "memory, GC and JIT variants" do

  let(:install) do
    Rackbench::Rubies::Install.new(name: "ruby", path: "/usr/bin/ruby3.1", source: :path, engine: "ruby",
                                   version: "3.1.2", jit: %w[yjit mjit], description: "ruby 3.1.2p20 (fake)")
  end
  let(:found) { Struct.new(:jemalloc, :missing_text).new("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "n/a") }
  let(:absent) { Struct.new(:jemalloc, :missing_text).new(nil, "libjemalloc.so.2 is not installed (...)") }

  def variant(**options)
    Rackbench::Rubies::Variant.new(install: install, name: "v", **options)
  end

  describe "malloc in a variant" do
    it "preloads jemalloc first, keeps the variant's own preload after it, and leaves a plain variant alone" do
      assert_equal "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
                   variant(malloc: "jemalloc", malloc_library: found).env["LD_PRELOAD"]
      both = variant(malloc: "jemalloc", env: { LD_PRELOAD: "/x/libmine.so" }, malloc_library: found)
      assert_equal "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /x/libmine.so", both.env["LD_PRELOAD"]
      assert_equal "jemalloc", both.malloc
      plain = variant(malloc_library: found)
      assert_nil plain.malloc
      refute plain.env.key?("LD_PRELOAD")
      assert_equal({ "LD_PRELOAD" => nil }, variant(malloc: "glibc").env, "glibc unsets any inherited preload")
    end

    it "fails in one line when jemalloc is not installed, and for a value or a combination that cannot be" do
      error = assert_raises(Rackbench::ConfigError) { variant(malloc: "jemalloc", malloc_library: absent) }
      assert_equal "ruby 'v': malloc jemalloc: libjemalloc.so.2 is not installed (...)", error.message
      error = assert_raises(Rackbench::ConfigError) { variant(malloc: "glibc", env: { LD_PRELOAD: "/x.so" }) }
      assert_match(/malloc glibc preloads nothing, but env sets LD_PRELOAD=\/x\.so/, error.message)
      assert_raises(Rackbench::ConfigError) { variant(malloc: "tcmalloc") }
    end

    it "finds the library in the first directory that has it, real path, and nil when none has" do
      dir = Dir.mktmpdir("malloc-lib")
      FileUtils.mkdir_p(File.join(dir, "lib", "x86_64-linux-gnu"))
      target = File.join(dir, "lib", "x86_64-linux-gnu", "libjemalloc.so.2")
      File.write(target, "")
      dirs = [File.join(dir, "lib", "*-linux-gnu"), File.join(dir, "lib64")]
      assert_equal File.realpath(target), Rackbench::Rubies::MallocLibrary.jemalloc(dirs: dirs)
      assert_nil Rackbench::Rubies::MallocLibrary.jemalloc(dirs: [File.join(dir, "lib64")])
    ensure
      FileUtils.rm_rf(dir)
    end

    it "is a key of a ruby entry: checked by name, and absent from the fingerprint when not given" do
      base = "name: x\nservers: [puma]\napps: [rack-hello]\nrubies: [{ name: a, ruby: ruby%s }]\n"
      plain = Rackbench::Experiment.parse(format(base, ""))
      assert_nil plain.ruby_specs.first[:malloc]
      assert_equal Rackbench::Experiment.parse(base.sub("%s", "")).fingerprint, plain.fingerprint
      jemalloc = Rackbench::Experiment.parse(format(base, ", malloc: jemalloc"))
      assert_equal "jemalloc", jemalloc.ruby_specs.first[:malloc]
      refute_equal plain.fingerprint, jemalloc.fingerprint
      error = assert_raises(Rackbench::ConfigError) { Rackbench::Experiment.parse(format(base, ", malloc: jemaloc")) }
      assert_equal 'experiment.yml: rubies[0].malloc: unknown malloc "jemaloc" (did you mean jemalloc?); ' \
                   "known: glibc, jemalloc", error.message
    end
  end

  describe "RUBY_GC_* variables" do
    let(:output) do
      <<~TEXT
        RUBY_GC_HEAP_FREE_SLOTS=0 (default value: 4096) is ignored because it must be greater than 0.
        RUBY_GC_HEAP_INIT_SLOTS=600000 (default value: 10000)
        RUBY_GC_HEAP_GROWTH_FACTOR=1.100000 (default value: 1.800000)
        invalid string for RUBY_GC_MALLOC_LIMIT: abc
      TEXT
    end
    let(:params) { Rackbench::Trial::Identity::RuntimeSettings.gc_params(output) }

    it "reads what ruby -w says it took, ignored and rejected" do
      assert_equal({ "value" => "600000", "problem" => nil }, params["RUBY_GC_HEAP_INIT_SLOTS"])
      assert_equal "is ignored because it must be greater than 0", params["RUBY_GC_HEAP_FREE_SLOTS"]["problem"]
      assert_equal "is not a valid value", params["RUBY_GC_MALLOC_LIMIT"]["problem"]
    end

    it "names each variable the ruby did not take, and records those it took" do
      env = { "RUBY_GC_HEAP_INIT_SLOTS" => "600000", "RUBY_GC_HEAP_GROWTH_FACTOR" => "1.1",
              "RUBY_GC_HEAP_FREE_SLOTS" => "0", "RUBY_GC_MALLOC_LIMIT" => "abc", "RUBY_GC_HEAP_INIT_SLOTZ" => "1",
              "RUBY_GC_OLDMALLOC_LIMIT" => nil, "MALLOC_ARENA_MAX" => "2" }
      problems = Rackbench::Trial::Identity::RuntimeSettings.gc_problems(env, params, ruby: "ruby 'v'")
      assert_equal ["RUBY_GC_HEAP_FREE_SLOTS=0: ruby 'v' is ignored because it must be greater than 0",
                    "RUBY_GC_MALLOC_LIMIT=abc: ruby 'v' is not a valid value",
                    "RUBY_GC_HEAP_INIT_SLOTZ=1: ruby 'v' does not read this variable (ruby -w names every GC " \
                    "variable it reads)"], problems
      assert_equal({ "RUBY_GC_HEAP_INIT_SLOTS" => "600000", "RUBY_GC_HEAP_GROWTH_FACTOR" => "1.100000" },
                   Rackbench::Trial::Identity::RuntimeSettings.gc_taken(env, params))
      assert_empty Rackbench::Trial::Identity::RuntimeSettings.gc_problems({ "MALLOC_ARENA_MAX" => "2" }, {}, ruby: "r"), "other names"
    end
  end

  describe "the expectation" do
    let(:env) { Struct.new(:checked).new({ "RUBY_GC_HEAP_INIT_SLOTS" => "600000" }) }
    let(:probe) do
      { "description" => "ruby 3.1.2p20 [x86_64-linux]", "exe" => "/usr/bin/ruby3.1", "jit" => nil,
        "malloc" => { "name" => "glibc" }, "gc_compact" => { "supported" => true, "count" => 0 },
        "gc_params" => { "RUBY_GC_HEAP_INIT_SLOTS" => { "value" => "600000", "problem" => nil } } }
    end

    def build(probe, variant: variant(malloc: "jemalloc", malloc_library: found), **options)
      Rackbench::Trial::Identity::Expectation.build(variant: variant, probe: probe, env: env, server_gem: "puma",
                                  server_version: "8.0.2", **options)
    end

    it "takes the variant's malloc, else the probe's, and records the GC values the ruby took" do
      expectation = build(probe, gc_compact_before_fork: true)
      assert_equal "jemalloc", expectation.malloc
      assert expectation.gc_compact_before_fork
      assert_equal({ "RUBY_GC_HEAP_INIT_SLOTS" => "600000" }, expectation.gc_env)
      assert_equal "glibc", build(probe, variant: variant).malloc
    end

    it "refuses before the boot: a GC variable not taken, MJIT that compiles nothing, no GC.compact" do
      error = assert_raises(Rackbench::SetupError) { build(probe.merge("gc_params" => {})) }
      assert_match(/\ARUBY_GC_HEAP_INIT_SLOTS=600000: ruby 'v' \(ruby 3\.1\.2p20\) does not read this variable/,
                   error.message)
      error = assert_raises(Rackbench::SetupError) { build(probe.merge("mjit_problem" => "MJIT is on but ...")) }
      assert_equal "MJIT is on but ...", error.message
      no_compact = probe.merge("gc_compact" => { "supported" => false, "count" => nil })
      error = assert_raises(Rackbench::SetupError) { build(no_compact, gc_compact_before_fork: true) }
      assert_equal "server option gc_compact_before_fork needs GC.compact, which ruby 'v' (ruby 3.1.2p20) " \
                   "does not have", error.message
      assert build(no_compact), "without the option, a ruby without GC.compact is fine"
    end

    it "asks MJIT to compile a method and names what it printed when it did not" do
      ok = Struct.new(:output, :timed_out) { def success? = true }
      run = ->(*, **) { ok.new("JIT success (500ms): rackbench_mjit_probe@-e:1 -> /tmp/x.c\n", false) }
      assert_nil Rackbench::Trial::Identity::RuntimeSettings.mjit_problem(["ruby", "--mjit"], env: {}, chdir: "/", run: run,
                                                                             timeout_s: 1)
      run = ->(*, **) { ok.new("MJIT warning: failed to compile\n", false) }
      problem = Rackbench::Trial::Identity::RuntimeSettings.mjit_problem(["ruby", "--mjit"], env: {}, chdir: "/", run: run,
                                                                              timeout_s: 1)
      assert_match(/\AMJIT is on but compiled nothing .*: MJIT warning: failed to compile\z/, problem)
    end
  end

  describe "the comparison" do
    def expectation(malloc:, compact: false)
      Rackbench::Trial::Identity::Expectation.new(label: "v", options: [], description: "ruby 3.1.2p20", exe: "/usr/bin/ruby3.1",
                                jit: nil, env: {}, server_gem: nil, server_version: nil, malloc: malloc,
                                gc_compact_before_fork: compact)
    end

    def process(pid, ppid, event, malloc: "glibc", maps: nil, compact_count: 0)
      { pid: pid, source: "reported", maps_malloc: maps && { "name" => maps, "path" => "/lib/lib#{maps}.so.2" },
        report: { "pid" => pid, "ppid" => ppid, "event" => event, "description" => "ruby 3.1.2p20",
                  "exe" => "/usr/bin/ruby3.1", "jit" => nil, "env" => {},
                  "malloc" => { "name" => malloc, "path" => malloc == "glibc" ? nil : "/lib/lib#{malloc}.so.2" },
                  "gc_compact" => { "supported" => true, "count" => compact_count } } }
    end

    def verify!(expected, processes)
      Rackbench::Trial::Identity::Comparison.new(expectation: expected, main_pid: 10).verify!(processes)
    end

    it "passes jemalloc mapped in every process, preferring the runner's reading of the maps, and records it" do
      record = verify!(expectation(malloc: "jemalloc"),
                       [process(10, 1, "exec", malloc: "jemalloc"), process(11, 10, "fork", maps: "jemalloc")])
      assert_equal %w[jemalloc jemalloc], record["processes"].map { |p| p["malloc"]["name"] }
      assert_equal "jemalloc", record["malloc"]["name"]
      error = assert_raises(Rackbench::IdentityMismatch) do
        verify!(expectation(malloc: "jemalloc"),
                [process(10, 1, "exec", malloc: "jemalloc"), process(11, 10, "fork", malloc: "jemalloc", maps: "glibc")])
      end
      assert_equal "identity check failed: process 11: runs glibc (no libjemalloc mapped), the variant 'v' asks " \
                   "for jemalloc", error.message
    end

    it "takes valgrind's own preloads out of LD_PRELOAD before comparing it (an instructions trial's server)" do
      under_valgrind = lambda do |env, preload|
        expected = Rackbench::Trial::Identity::Expectation.new(
          label: "v", options: [], description: "ruby 3.1.2p20", exe: "/usr/bin/ruby3.1", jit: nil, env: env,
          server_gem: nil, server_version: nil, malloc: nil, gc_compact_before_fork: false
        )
        report = process(10, 1, "exec")
        report[:report]["env"] = { "LD_PRELOAD" => preload }
        report[:report]["malloc"] = nil
        verify!(expected, [report])
      end
      valgrind = "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so"
      assert under_valgrind.call({ "LD_PRELOAD" => nil }, valgrind)
      assert under_valgrind.call({ "LD_PRELOAD" => "/lib/libjemalloc.so.2" }, "#{valgrind}:/lib/libjemalloc.so.2")
      error = assert_raises(Rackbench::IdentityMismatch) { under_valgrind.call({ "LD_PRELOAD" => nil }, "#{valgrind}:/lib/x.so") }
      assert_match(%r{LD_PRELOAD=/lib/x.so is set, the trial leaves it unset}, error.message)
      assert_equal "a.so:b.so", Rackbench::Trial::Identity::Comparison.without_valgrind_preload("a.so:b.so"),
                   "a preload without valgrind's is compared as it is"
    end

    it "fails a glibc variant with jemalloc mapped" do
      error = assert_raises(Rackbench::IdentityMismatch) do
        verify!(expectation(malloc: "glibc"), [process(10, 1, "exec", malloc: "jemalloc")])
      end
      assert_match(/main process 10: runs jemalloc \(\/lib\/libjemalloc\.so\.2 is mapped\), the variant 'v' runs glibc's/,
                   error.message)
    end

    it "asks every worker (a fork that forked no reporting process) for a compacted heap, only when asked" do
      tree = [process(10, 1, "exec"), process(11, 10, "fork"), process(12, 11, "fork", compact_count: 1),
              process(13, 11, "fork", compact_count: 2)]
      record = verify!(expectation(malloc: "glibc", compact: true), tree)
      assert_equal [0, 0, 1, 2], record["processes"].map { |p| p["gc_compact_count"] }
      tree[3] = process(13, 11, "fork", compact_count: 0)
      error = assert_raises(Rackbench::IdentityMismatch) { verify!(expectation(malloc: "glibc", compact: true), tree) }
      assert_equal "identity check failed: process 13: forked from a heap never compacted (GC.compact count 0), " \
                   "the server option gc_compact_before_fork asks for a compaction before every fork", error.message
      assert verify!(expectation(malloc: "glibc"), tree), "not asked: not checked"
      # Pitchfork's mold: forked before the compaction it ran itself, seen in its answer at readiness.
      tree[3] = process(13, 11, "fork", compact_count: 0).merge(late: { "gc_compact_count" => 1 })
      record = verify!(expectation(malloc: "glibc", compact: true), tree)
      assert_equal [nil, nil, nil, 1], record["processes"].map { |p| p["gc_compact_count_at_ready"] }
    end
  end

  describe "gc_compact_before_fork" do
    let(:dir) { Dir.mktmpdir("compact-option") }
    after { FileUtils.rm_rf(dir) }

    def config(server, value)
      command = Rackbench::Servers.fetch(server).command(config_ru: "config.ru", port: 9, processes: 2, threads: 1,
                                                         work_dir: dir, options: { "gc_compact_before_fork" => value })
      File.read(command[2])
    end

    it "puts GC.compact in each forking server's own hook when true, and nothing when false" do
      assert_includes config("puma", true), "before_fork { GC.compact }\n"
      assert_match(/before_fork do \|server, worker\|\n.*GC\.compact/m, config("unicorn", true))
      assert_match(/before_fork do \|_server\|\n.*GC\.compact/m, config("pitchfork", true))
      %w[puma unicorn pitchfork].each { |server| refute_includes config(server, false), "GC.compact", server }
    end

    it "is refused where nothing forks through a hook rackbench writes, and where Puma would not run it" do
      puma = Rackbench::Servers.fetch("puma")
      assert_match(/cluster mode only/, puma.unsupported_reason(processes: 1, threads: 1, ruby_engine: "ruby",
                                                                options: { "gc_compact_before_fork" => true }))
      assert_match(/forked from worker 0/, puma.unsupported_reason(
        processes: 2, threads: 1, ruby_engine: "ruby", options: { "gc_compact_before_fork" => true, "fork_worker" => true }
      ))
      %w[webrick falcon].each do |server|
        text = "name: x\nservers: [{ name: #{server}, options: { gc_compact_before_fork: true } }]\napps: [rack-hello]\n"
        error = assert_raises(Rackbench::ConfigError) { Rackbench::Experiment.parse(text) }
        assert_equal "experiment.yml: servers[0].options.gc_compact_before_fork: #{server} does not fork workers " \
                     "through a hook rackbench configures; gc_compact_before_fork is an option of pitchfork, puma, " \
                     "unicorn", error.message
      end
    end
  end
end
