# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require "rackbench/bundle_env"
require "rackbench/servers/passenger/agent_build"

# Passenger's agent compiled once per installed gem, over a fake bundle
# whose `passenger-config` is a small script: what it runs, the progress
# it shows, the cache, and a failure's reason.
describe Rackbench::Servers::PassengerAgentBuild do
  FakeBundle = Struct.new(:dir, :gem_dir, :lock_path, :exec_prefix, :env, :gemfile_path, :versions,
                          keyword_init: true) do
    def gem_versions = versions
  end

  # Stands in for `launcher.rb passenger-config ...` (a shell script: it
  # starts in a millisecond): records its arguments; for compile-agent
  # ... --working-dir DIR, compiles two "objects", waits for the test's go
  # file when asked to (so a progress line is certain to come first), then
  # writes the agent, or fails.
  FAKE_COMPILER = <<~'SH'
    printf '%s\n' "$*" >> "$FAKE_ARGS"
    if [ "$2" = build-native-support ]; then
      if [ -n "$FAKE_NATIVE_FAIL" ]; then echo "native support: cc1: error"; exit 3; fi
      exit 0
    fi
    if [ -n "$FAKE_PIDFILE" ]; then echo $$ > "$FAKE_PIDFILE"; fi
    while [ $# -gt 0 ]; do
      if [ "$1" = --working-dir ]; then work=$2; fi
      shift
    done
    : > "$work/part0.o"
    : > "$work/part1.o"
    if [ -n "$FAKE_WAIT_FOR" ]; then
      i=0
      while [ ! -e "$FAKE_WAIT_FOR" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
    fi
    if [ -n "$FAKE_FAIL" ]; then echo "g++: fatal error: Killed signal terminated program cc1plus"; exit 2; fi
    mkdir -p "$(dirname "$FAKE_AGENT")"
    printf '#!/bin/sh\n' > "$FAKE_AGENT"
    chmod 755 "$FAKE_AGENT"
    echo "Compilation finished!"
  SH

  # An IO that creates the go file when the first progress line arrives.
  class GoOut < StringIO
    def initialize(go)
      super(+"")
      @go = go
    end

    def puts(*lines)
      File.write(@go, "") if lines.join.include?("compiling Passenger")
      super
    end
  end

  before do
    @dir = Dir.mktmpdir("rackbench-agent-build")
    script = File.join(@dir, "fake_compiler.sh")
    File.write(script, FAKE_COMPILER)
    @gem_dir = File.join(@dir, "gems", "ruby", "3.1.0")
    @agent = File.join(@gem_dir, "gems", "passenger-6.2.1", "buildout", "support-binaries", "PassengerAgent")
    @args = File.join(@dir, "args")
    @env = { "FAKE_ARGS" => @args, "FAKE_AGENT" => @agent }
    @bundle = FakeBundle.new(dir: @dir, gem_dir: @gem_dir, lock_path: File.join(@dir, "install.lock"),
                             exec_prefix: ["/bin/sh", script], env: @env, gemfile_path: File.join(@dir, "Gemfile"),
                             versions: { "passenger" => "6.2.1", "rack" => "3.1.0" })
    @log = File.join(@dir, "logs", "bundle.log")
  end

  after { FileUtils.remove_entry(@dir) }

  def build(progress_interval_s: 60)
    Rackbench::Servers::PassengerAgentBuild.new(@bundle, progress_interval_s: progress_interval_s,
                                                         shared_root: File.join(@dir, "shared"))
  end

  it "compiles the agent into the bundle's passenger gem with compile-agent --optimize, then the native support" do
    out = StringIO.new
    assert_equal :compiled, build.ensure_built!(out: out, log: @log)
    assert File.executable?(@agent)
    assert_equal @agent, build.agent_path
    agent, native = File.readlines(@args).map(&:split)
    assert_equal %w[passenger-config compile-agent --auto --optimize --working-dir], agent.first(5)
    assert_equal %w[passenger-config build-native-support], native
    refute(File.read(@args).include?("download"))
    assert_match(/Compiling Passenger 6\.2\.1's agent from source, once for every ruby \(it takes minutes; log: #{Regexp.escape(@log)}\)/,
                 out.string)
    assert_match(/Passenger 6\.2\.1's agent compiled in \d+ s \(2 objects\)/, out.string)
    assert_includes File.read(@log), "Compilation finished!"
  end

  it "shows how the compile goes while it runs" do
    @env["FAKE_WAIT_FOR"] = File.join(@dir, "go")
    out = GoOut.new(@env["FAKE_WAIT_FOR"])
    assert_equal :compiled, build(progress_interval_s: 0.05).ensure_built!(out: out, log: @log)
    assert_match(/^  compiling Passenger 6\.2\.1's agent: \d+ objects, \d+ s$/, out.string)
  end

  it "records each compile, and estimates the next one from it: its time, then the objects left" do
    assert_equal :compiled, build.ensure_built!(out: StringIO.new, log: @log)
    agents = Rackbench::Servers::PassengerAgents.new(root: File.join(@dir, "shared"))
    last = agents.last_build
    assert_equal ["6.2.1", 2], [last.version, last.objects]
    assert_operator last.duration_s, :>=, 0.0
    record = JSON.parse(File.read(File.join(File.dirname(agents.agent_path("6.2.1")), "build.json")))
    assert_equal Rackbench::Servers::PassengerAgents.compiler.strip, record["compiler"]

    # Another version (an agent of its own): the progress says how far it is against the last compile.
    File.write(File.join(File.dirname(agents.agent_path("6.2.1")), "build.json"),
               JSON.generate(record.merge("duration_s" => 600.0, "objects" => 4)))
    @bundle.versions = { "passenger" => "6.3.0" }
    @agent = @env["FAKE_AGENT"] = File.join(@gem_dir, "gems", "passenger-6.3.0", "buildout", "support-binaries",
                                             "PassengerAgent")
    @env["FAKE_WAIT_FOR"] = File.join(@dir, "go")
    out = GoOut.new(@env["FAKE_WAIT_FOR"])
    assert_equal :compiled, build(progress_interval_s: 0.05).ensure_built!(out: out, log: @log)
    assert_match(/Compiling Passenger 6\.3\.0's agent from source, once for every ruby \(about 10m00s, as the last compile here; /,
                 out.string)
    # 2 of 4 objects (half) in a few seconds at most: about as long again left, at this compile's pace.
    assert_match(/^  compiling Passenger 6\.3\.0's agent: 2 of about 4 objects, \d+ s(, about \d+ s left)?$/, out.string)
    assert_equal "6.3.0", agents.last_build.version
    assert_equal %w[6.3.0 6.2.1], agents.versions
  end

  it "compiles no agent when it is there, and leaves the native support to Passenger's own check" do
    assert_equal :compiled, build.ensure_built!(out: StringIO.new, log: @log)
    File.delete(@args)
    out = StringIO.new
    assert_equal :reused, build.ensure_built!(out: out, log: @log)
    assert_equal ["passenger-config build-native-support\n"], File.readlines(@args), "compiled the agent again"
    assert_empty out.string
  end

  it "copies the agent compiled for another ruby's gem directory instead of compiling it again" do
    assert_equal :compiled, build.ensure_built!(out: StringIO.new, log: @log)
    assert File.executable?(build.shared_agent_path), "kept for the other rubies"
    other_gem_dir = File.join(@dir, "gems", "ruby", "3.4.0")
    @bundle = FakeBundle.new(**@bundle.to_h, gem_dir: other_gem_dir)
    File.delete(@args)

    out = StringIO.new
    assert_equal :copied, build.ensure_built!(out: out, log: @log)

    copied = File.join(other_gem_dir, "gems", "passenger-6.2.1", "buildout", "support-binaries", "PassengerAgent")
    assert_equal File.read(@agent), File.read(copied)
    assert File.executable?(copied)
    assert_equal ["passenger-config build-native-support\n"], File.readlines(@args), "no compile-agent"
    assert_match(/Passenger 6\.2\.1's agent copied from .*compiled once for every ruby/, out.string)
  end

  it "fails naming the native support when it cannot be built" do
    @env["FAKE_NATIVE_FAIL"] = "1"
    error = assert_raises(Rackbench::SetupError) { build.ensure_built!(out: StringIO.new, log: @log) }
    assert_match(/compiling Passenger 6\.2\.1's native support exited with status 3 .*cc1: error/, error.message)
  end

  it "fails with the compiler's last lines and the log when the compile fails" do
    @env["FAKE_FAIL"] = "1"
    error = assert_raises(Rackbench::SetupError) { build.ensure_built!(out: StringIO.new, log: @log) }
    assert_match(/compiling Passenger 6\.2\.1's agent exited with status 2 \(log: #{Regexp.escape(@log)}\)/,
                 error.message)
    assert_includes error.message, "cc1plus"
    refute File.exist?(@agent)
  end

  it "fails when the compile times out, leaving nothing running" do
    @env["FAKE_WAIT_FOR"] = File.join(@dir, "never")
    pid_file = @env["FAKE_PIDFILE"] = File.join(@dir, "pid")
    # The first progress line waits for the compiler's pid, so the timeout
    # surely comes after the compiler started.
    out = StringIO.new
    out.define_singleton_method(:puts) do |*lines|
      if lines.join.include?("  compiling Passenger")
        wait_until(timeout_s: 30, message: "the fake compiler's pid") { File.size?(pid_file) }
      end
      super(*lines)
    end
    this = self
    out.define_singleton_method(:wait_until) { |**options, &block| this.wait_until(**options, &block) }
    builder = Rackbench::Servers::PassengerAgentBuild.new(@bundle, timeout_s: 0.3, progress_interval_s: 0.01,
                                                                   shared_root: File.join(@dir, "shared"))
    error = assert_raises(Rackbench::SetupError) { builder.ensure_built!(out: out, log: @log) }
    assert_match(/timed out after 0 s/, error.message)
    assert_raises(Errno::ESRCH) { Process.kill(0, File.read(pid_file).to_i) }
  end

  it "kills the compiler when it is interrupted" do
    @env["FAKE_WAIT_FOR"] = File.join(@dir, "never")
    pid_file = @env["FAKE_PIDFILE"] = File.join(@dir, "pid")
    this = self
    out = StringIO.new
    out.define_singleton_method(:puts) do |*lines|
      if lines.join.include?("  compiling Passenger")
        this.wait_until(timeout_s: 30, message: "the fake compiler's pid") { File.size?(pid_file) }
        raise Interrupt
      end
      super(*lines)
    end
    assert_raises(Interrupt) { build(progress_interval_s: 0.01).ensure_built!(out: out, log: @log) }
    assert_raises(Errno::ESRCH) { Process.kill(0, File.read(pid_file).to_i) }
  end

  it "names a bundle without the passenger gem" do
    @bundle.versions = { "rack" => "3.1.0" }
    error = assert_raises(Rackbench::SetupError) { build.ensure_built!(out: StringIO.new, log: @log) }
    assert_match(/does not lock the passenger gem/, error.message)
  end
end
