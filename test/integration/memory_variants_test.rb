# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "support/test_rubies"

# Memory, GC and JIT variants, run for real in one experiment (one boot per
# trial, a short window: this is about what runs, not speed):
#
# - jemalloc (malloc: jemalloc) mapped in every process of the server, read
#   by the runner from /proc/PID/maps, and glibc's malloc in every process
#   of the plain variant;
# - a preload that is not there (ld.so only warns and runs without it)
#   fails the trial, naming the library;
# - the RUBY_GC_* values the ruby took are recorded; a name it does not
#   read (a typo on 3.1, 3.1's RUBY_GC_HEAP_INIT_SLOTS on 3.4) stops the
#   run before any trial, in one line, with nothing stored;
# - MJIT on in every process of the MJIT variant (it compiles here: gcc);
# - gc_compact_before_fork: every worker of Puma, Unicorn and Pitchfork
#   forked from a compacted heap, no compaction without it; the tree's PSS
#   is printed both ways (rack-hello is small: no direction is asserted).
describe "memory, GC and JIT variants (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-memvar") }

  after { FileUtils.rm_rf(dir) }

  it "proves each variant in every process, and fails the ones that cannot be what they name" do
    file = File.join(dir, "memvar.yml")
    File.write(file, <<~YAML)
      name: memvar
      rubies:
        - ruby
        - { name: ruby-jemalloc, ruby: ruby, malloc: jemalloc, env: { RUBY_GC_HEAP_INIT_SLOTS: 600000 } }
        - { name: ruby-mjit, ruby: ruby, options: ["--mjit"] }
        - { name: ruby-missing, ruby: ruby, env: { LD_PRELOAD: libnot-there-rackbench.so } }
      servers:
        - puma
        - { name: puma, label: puma-compact, options: { gc_compact_before_fork: true } }
        - { name: unicorn, label: unicorn-compact, options: { gc_compact_before_fork: true } }
        - { name: pitchfork, label: pitchfork-compact, options: { gc_compact_before_fork: true } }
      apps: [rack-hello]
      processes: 2
      threads: 1
      load: { connections: 2, duration: 0.5s, warmup: 0.2s, timeout: 5s }
      exclude:
        - { ruby: [ruby-mjit, ruby-missing], server: [puma-compact, unicorn-compact, pitchfork-compact] }
        - { ruby: ruby-jemalloc, server: [unicorn-compact, pitchfork-compact] }
    YAML
    results = File.join(dir, "results")
    out, err, = rackbench("run", file, "--results", results)
    trials = Rackbench::Store.open(results) { |store| store.trials }.to_h { |t| [[t.ruby, t.server], t] }
    assert_equal 8, trials.size, "#{err}\n#{out}"

    ok = lambda do |ruby, server|
      trial = trials.fetch([ruby, server])
      # A trial may still fail for want of an answer on a busy machine; its
      # identity was checked before it measured.
      assert trial.identity, "#{ruby} on #{server}: #{trial.reason}"
      assert_empty trial.identity["mismatches"], "#{ruby} on #{server}"
      trial.identity
    end

    # jemalloc in every process, and glibc in every process of the others.
    { "ruby" => "glibc", "ruby-jemalloc" => "jemalloc", "ruby-mjit" => "glibc" }.each do |ruby, malloc|
      identity = ok.call(ruby, "puma")
      assert_equal 3, identity["processes"].size, "#{ruby}: master and 2 workers"
      assert_equal [malloc], identity["processes"].map { |p| p.dig("malloc", "name") }.uniq, ruby
      assert_equal malloc, identity.dig("expected", "malloc"), ruby
    end
    jemalloc = ok.call("ruby-jemalloc", "puma")
    assert_equal [File.realpath("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")],
                 jemalloc["processes"].map { |p| p.dig("malloc", "path") }.uniq
    assert(jemalloc["processes"].all? { |p| p["preloaded"].map { |lib| lib["mapped"] } == [true] })
    assert_equal({ "RUBY_GC_HEAP_INIT_SLOTS" => "600000" }, jemalloc.dig("expected", "gc_env"))
    assert_empty ok.call("ruby", "puma").dig("expected", "gc_env")

    # The JIT each variant asked for, in every process.
    assert_equal ["mjit"], ok.call("ruby-mjit", "puma")["processes"].map { |p| p["jit"] }.uniq
    assert_equal [nil], ok.call("ruby", "puma")["processes"].map { |p| p["jit"] }.uniq

    # Failures named.
    missing = trials.fetch(%w[ruby-missing puma])
    assert_equal "failed", missing.status
    assert_match(/LD_PRELOAD names libnot-there-rackbench\.so, which is not loaded/, missing.reason)

    # Compaction before fork: every worker, each server through its own hook.
    workers = ->(identity) { identity["processes"].select { |p| p["event"] == "fork" } }
    %w[puma-compact unicorn-compact pitchfork-compact].each do |server|
      identity = ok.call("ruby", server)
      leaves = workers.call(identity).reject { |p| identity["processes"].any? { |q| q["ppid"] == p["pid"] } }
      # Pitchfork's mold is a leaf too (its workers are its siblings): it
      # compacted after its fork, as its answer at readiness shows.
      assert(leaves.all? { |p| [p["gc_compact_count"], p["gc_compact_count_at_ready"].to_i].max >= 1 },
             "#{server}: #{identity["processes"]}")
      assert_operator leaves.count { |p| p["gc_compact_count"] >= 1 }, :>=, 2,
                      "#{server}: two workers forked from a compacted heap: #{identity["processes"]}"
      assert identity.dig("expected", "gc_compact_before_fork"), server
    end
    assert(workers.call(ok.call("ruby-jemalloc", "puma-compact")).all? { |p| p["gc_compact_count"] >= 1 })
    assert_equal [0], ok.call("ruby", "puma")["processes"].map { |p| p["gc_compact_count"] }.uniq
    refute ok.call("ruby", "puma").dig("expected", "gc_compact_before_fork")

    # The proof the issue asks for: the tree's PSS both ways.
    %w[puma puma-compact].each do |server|
      trial = trials.fetch(["ruby", server])
      puts "\n  rack-hello, puma 2 workers, #{server}: PSS of the tree #{trial.pss_peak_bytes.inspect} bytes (peak)"
    end
  end

  it "stops the run before any trial when a ruby does not read a GC variable it was given" do
    # Both sides: the variable each ruby reads is taken (the first
    # experiment above, and 3.4's own name here), the one it does not read
    # refuses the run.
    r34 = TestRubies.ruby("3.4")
    {
      "{ name: ruby-gc-typo, ruby: ruby, env: { RUBY_GC_HEAP_INIT_SLOTZ: 600000 } }" =>
        /ruby=ruby-gc-typo .*: RUBY_GC_HEAP_INIT_SLOTZ=600000: ruby 'ruby-gc-typo' does not read this variable/,
      "{ name: r34-old-slots, ruby: #{r34}, env: { RUBY_GC_HEAP_INIT_SLOTS: 600000 } }" =>
        /ruby=r34-old-slots .*: RUBY_GC_HEAP_INIT_SLOTS=600000: ruby 'r34-old-slots' does not read this variable/,
      "{ name: r34-slots, ruby: #{r34}, env: { RUBY_GC_HEAP_0_INIT_SLOTS: 600000 } }" => nil
    }.each_with_index do |(ruby, refusal), i|
      file = File.join(dir, "gc-#{i}.yml")
      File.write(file, <<~YAML)
        name: gc-#{i}
        rubies: [#{ruby}]
        servers: [puma]
        apps: [rack-hello]
        processes: 1
        threads: 1
        load: { connections: 2, duration: 0.5s, warmup: 0.2s, timeout: 5s }
      YAML
      results = File.join(dir, "gc-results-#{i}")
      out, err, status = rackbench("run", file, "--results", results)
      trials = File.exist?(File.join(results, "results.db")) ? Rackbench::Store.open(results, &:trials) : []
      if refusal
        assert_equal 1, status.exitstatus, "#{err}\n#{out}"
        # Its last line (a busy machine's warning may come before it).
        assert_match(/\Arackbench: #{refusal.source}.*; nothing was run\n\z/, err.lines.last)
        assert_empty trials, "no trial stored"
      else
        assert status.success?, "#{err}\n#{out}"
        assert_equal [["ok", { "RUBY_GC_HEAP_0_INIT_SLOTS" => "600000" }]],
                     trials.map { |t| [t.status, t.identity.dig("expected", "gc_env")] }
      end
    end
  end
end
