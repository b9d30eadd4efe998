# frozen_string_literal: true

require "fileutils"
require "tmpdir"

# Where a built-in app keeps the database its setup step seeds, and how the
# setup writes it. Shared by io-wait and rails-posts.
module TrialFile
  module_function

  # The file +name+ in the trial's directory when the runner set one (fresh
  # per trial, so what a trial writes touches only its own copy), else in a
  # directory of +app+'s own under the system's tmp.
  def path(name, app, env = ENV)
    dir = env["RACKBENCH_TRIAL_DIR"] || File.join(Dir.tmpdir, "rackbench-#{app}-#{Process.uid}")
    File.join(dir, name)
  end

  # Yields a temporary path beside +path+ to write the file to, then renames
  # it into place whole, so a server never opens a half-seeded database.
  # SQLite's -wal and -shm files left beside +path+ by an earlier database
  # are removed first: they would be replayed into the new one.
  def write_atomically(path)
    FileUtils.mkdir_p(File.dirname(path))
    tmp = "#{path}.#{Process.pid}.tmp"
    FileUtils.rm_f(tmp)
    yield tmp
    FileUtils.rm_f(["#{path}-wal", "#{path}-shm"])
    File.rename(tmp, path)
  end
end
