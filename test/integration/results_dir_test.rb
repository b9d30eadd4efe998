# frozen_string_literal: true

require "test_helper"
require "open3"

describe Rackbench::Runner::ResultsDir do
  ResultsDir = Rackbench::Runner::ResultsDir

  before { @dir = Dir.mktmpdir("rackbench-results-dir") }
  after { FileUtils.rm_rf(@dir) }

  it "holds the directory for one run, and refuses a second at once, naming the holder" do
    reader, writer = IO.pipe
    # Another rackbench holding the directory: a separate process, as a
    # second `rackbench run` would find it.
    holder = Process.spawn(RbConfig.ruby, "-I", File.expand_path("../../lib", __dir__), "-rrackbench", "-e",
                           "Rackbench::Runner::ResultsDir.lock(#{@dir.inspect}) { $stdin.read }", in: reader)
    wait_until(timeout_s: 30, message: "the holder to take the lock") do
      File.read(File.join(@dir, ResultsDir::LOCK_FILE)).strip == holder.to_s
    rescue Errno::ENOENT
      false
    end

    error = assert_raises(Rackbench::UsageError) { ResultsDir.lock(@dir) { flunk "ran while the directory was held" } }
    assert_equal "#{@dir} is in use by another rackbench run (pid #{holder}): wait for it to finish, or choose " \
                 "another --results directory", error.message

    writer.close # the holder's stdin ends: it releases and exits
    Process.wait(holder)
    assert_equal :ran, ResultsDir.lock(@dir) { :ran }, "free again once the holder is gone"
  ensure
    reader&.close
    writer&.close unless writer&.closed?
  end

  it "checks the directory can be written before anything slow starts" do
    File.write(File.join(@dir, "file"), "")
    error = assert_raises(Rackbench::Store::Error) { ResultsDir.check_writable!(File.join(@dir, "file", "results")) }
    assert_match(/cannot create results directory .*file is not a directory/, error.message)
  end
end
