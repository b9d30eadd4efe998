# frozen_string_literal: true

require "test_helper"

# The app's own logs kept with the trial (Trial::Http::AppLogs): what was
# written since boot, bounded, and the error a Rails log names.
describe Rackbench::Trial::Http::AppLogs do
  let(:dir) { Dir.mktmpdir("rackbench-app-logs") }
  let(:app_dir) { File.join(dir, "app").tap { |d| FileUtils.mkdir_p(File.join(d, "log")) } }
  let(:work_dir) { File.join(dir, "work").tap { |d| FileUtils.mkdir_p(d) } }
  after { FileUtils.rm_rf(dir) }

  def log(name, text, mode: "a")
    path = File.join(app_dir, "log", name)
    FileUtils.mkdir_p(File.dirname(path))
    File.write(path, text, mode: mode)
  end

  it "copies what each log gained since boot, and only logs that grew" do
    log("production.log", "before the trial\n")
    log("quiet.log", "untouched\n")
    logs = Rackbench::Trial::Http::AppLogs.new(app_dir)
    log("production.log", "during the trial\n")
    log("jobs/worker.log", "a new log\n")
    copies = logs.copy(work_dir)
    assert_equal %w[jobs/worker.log production.log].map { |n| File.join(work_dir, "app-logs", n) }, copies
    assert_equal "during the trial\n", File.read(copies.last)
    assert_equal "a new log\n", File.read(copies.first)
  end

  it "keeps the last bytes of a log that grew past the bound, and all of one replaced since boot" do
    log("production.log", "x" * 100)
    log("rotated.log", "y" * 100)
    logs = Rackbench::Trial::Http::AppLogs.new(app_dir, max_bytes: 10)
    log("production.log", "#{"a" * 50}0123456789")
    log("rotated.log", "new", mode: "w")
    copies = logs.copy(work_dir).to_h { |path| [File.basename(path), File.read(path)] }
    assert_equal({ "production.log" => "0123456789", "rotated.log" => "new" }, copies)
  end

  it "copies nothing for an app without a log directory" do
    FileUtils.rm_rf(File.join(app_dir, "log"))
    logs = Rackbench::Trial::Http::AppLogs.new(app_dir)
    assert_empty logs.copy(work_dir)
    assert_nil logs.error_line
  end

  it "names the exception a Rails log records, not its last backtrace line" do
    log("production.log", "I, [2026-11-24T01:00:00.000 #1]  INFO -- : boot\n")
    logs = Rackbench::Trial::Http::AppLogs.new(app_dir)
    log("production.log", <<~LOG)
      I, [2026-11-24T01:00:01.000 #12]  INFO -- : [4f2a] Started GET "/" for 127.0.0.1
      I, [2026-11-24T01:00:01.010 #12]  INFO -- : [4f2a] Completed 500 Internal Server Error in 3ms
      F, [2026-11-24T01:00:01.011 #12] FATAL -- : [4f2a]   
      F, [2026-11-24T01:00:01.011 #12] FATAL -- : [4f2a] ActiveRecord::StatementInvalid (SQLite3::SQLException: no such table: posts):
      F, [2026-11-24T01:00:01.011 #12] FATAL -- : [4f2a]   
      F, [2026-11-24T01:00:01.012 #12] FATAL -- : [4f2a] app/controllers/posts_controller.rb:3:in `index'
      I, [2026-11-24T01:00:01.100 #12]  INFO -- : [77b0] Started GET "/up" for 127.0.0.1
    LOG
    assert_equal "log/production.log: ActiveRecord::StatementInvalid (SQLite3::SQLException: no such table: posts):",
                 logs.error_line
  end

  it "adds the app log's error to a failure reason that names none, and only then" do
    logs = Rackbench::Trial::Http::AppLogs.new(app_dir)
    plain = "app check failed: GET / answered 500, expected 200\nserver output tail"
    assert_equal plain, logs.reason(plain), "nothing logged: the reason stands"
    log("production.log", "F, [2026-11-24T01:00:01.011 #12] FATAL -- : [4f2a] NameError (undefined local variable `x'):\n")
    assert_equal "app check failed: GET / answered 500, expected 200; app log log/production.log: " \
                 "NameError (undefined local variable `x'):\nserver output tail", logs.reason(plain)
    named = "server exited with status 1 before it was ready: LoadError: cannot load such file -- x"
    assert_equal named, logs.reason(named), "the server's output names the error"
  end

  it "names no error when the log written during the trial holds none" do
    logs = Rackbench::Trial::Http::AppLogs.new(app_dir)
    log("production.log", "I, [2026-11-24T01:00:01.000 #12]  INFO -- : Completed 200 OK in 3ms\n")
    assert_nil logs.error_line
  end
end
