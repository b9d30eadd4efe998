# frozen_string_literal: true

require "test_helper"
require "json"

# The identity check of processes that have ended (a benchmark script and
# its forked workers), from their reports alone: what it accepts, and each
# way it fails, by name. The agent writing real reports is exercised in
# test/integration/ (micro_test, identity_check_test).
describe Rackbench::Trial::Identity::Finished do
  let(:dir) { Dir.mktmpdir("identity-finished") }
  after { FileUtils.rm_rf(dir) }

  let(:expectation) do
    Rackbench::Trial::Identity::Expectation.new(
      label: "ruby-yjit", options: ["--yjit"], description: "ruby 3.1.2p20 +YJIT [x86_64-linux]",
      exe: "/usr/bin/ruby3.1", jit: "yjit", env: { "MALLOC_ARENA_MAX" => "2", "X" => nil },
      server_gem: nil, server_version: nil
    )
  end

  def report(pid, ppid, event, **changes)
    base = { "pid" => pid, "ppid" => ppid, "event" => event, "description" => "ruby 3.1.2p20 +YJIT [x86_64-linux]",
             "exe" => "/usr/bin/ruby3.1", "jit" => "yjit", "env" => { "MALLOC_ARENA_MAX" => "2", "X" => nil } }
    reports = File.join(dir, "identity")
    FileUtils.mkdir_p(reports)
    File.write(File.join(reports, "#{pid}.json"), JSON.generate(base.merge(changes.transform_keys(&:to_s))))
  end

  def verify!
    Rackbench::Trial::Identity::Finished.new(trial_dir: dir, expectation: expectation).verify!
  end

  it "passes a script and its forked workers that all ran the variant, main process first" do
    report(200, 100, "exec")
    report(202, 200, "fork")
    report(201, 200, "fork")
    record = verify!
    assert_equal [[200, "exec"], [201, "fork"], [202, "fork"]],
                 record["processes"].map { |p| [p["pid"], p["event"]] }
    assert_equal ["yjit", "2", []], [record["jit"], record["env"]["MALLOC_ARENA_MAX"], record["mismatches"]]
    assert_equal "ruby-yjit", record["expected"]["label"]
  end

  it "names a worker that ran without the JIT, and one that had a variable the trial leaves unset" do
    report(200, 100, "exec")
    report(201, 200, "fork", jit: nil)
    report(202, 200, "fork", env: { "MALLOC_ARENA_MAX" => "2", "X" => "1" })
    error = assert_raises(Rackbench::IdentityMismatch) { verify! }
    assert_equal "identity check failed: process 201: YJIT off, the variant 'ruby-yjit' asks for it (--yjit) " \
                 "(and 1 more)", error.message
    assert_equal ["process 201: YJIT off, the variant 'ruby-yjit' asks for it (--yjit)",
                  "process 202: X=1 is set, the trial leaves it unset"], error.record["mismatches"]
  end

  it "names another ruby in the main process" do
    report(200, 100, "exec", exe: "/opt/ruby-3.3/bin/ruby", description: "ruby 3.3.6 +YJIT [x86_64-linux]")
    error = assert_raises(Rackbench::IdentityMismatch) { verify! }
    assert_match(%r{\Aidentity check failed: main process 200: ran /opt/ruby-3.3/bin/ruby, the variant 'ruby-yjit' runs /usr/bin/ruby3.1\z},
                 error.message)
  end

  it "fails when nothing reported, and when two unrelated processes did" do
    error = assert_raises(Rackbench::IdentityMismatch) { verify! }
    assert_match(/the script reported no identity/, error.message)
    assert_nil error.record

    report(200, 100, "exec")
    report(300, 150, "exec")
    error = assert_raises(Rackbench::IdentityMismatch) { verify! }
    assert_match(/2 unrelated processes reported \(pids 200, 300\), one script was started/, error.message)
  end

  it "ignores a file that is not a whole report" do
    report(200, 100, "exec")
    File.write(File.join(dir, "identity", "201.json"), "{\"pid\": 201, \"pp")
    assert_equal [200], verify!["processes"].map { |p| p["pid"] }
  end
end
