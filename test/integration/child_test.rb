# frozen_string_literal: true

require "test_helper"

# Rubies::Child, with real processes: a command that leaves something
# running in its process group (a hook's `sleep &`) does not leave it alive
# once it has ended.
describe Rackbench::Rubies::Child do
  let(:dir) { Dir.mktmpdir("rackbench-child") }
  after { FileUtils.rm_rf(dir) }

  it "stops what a command logging to a file left running in its group, and leaves alone what it did not start" do
    pid_file = File.join(dir, "left.pid")
    log = File.join(dir, "hook.log")
    outside = Process.spawn("sleep", "60", pgroup: true)
    result = Rackbench::Rubies::Child.run(["/bin/sh", "-c", "sleep 60 & echo $! > #{pid_file}; echo started"],
                                          env: { "PATH" => "/usr/bin:/bin" }, timeout_s: 60, log_path: log)
    assert result.success?
    assert_includes File.read(log), "started"
    left = Integer(File.read(pid_file))
    wait_until(timeout_s: 30, message: "the command's background process to end") { !alive?(left) }
    assert alive?(outside), "a process of another group is untouched"
  ensure
    Process.kill(:KILL, outside) if outside
    Process.wait(outside) if outside
  end
end
