# frozen_string_literal: true

module Rackbench
  class Runner
    # The results directory a run writes to: checked writable before any
    # slow work starts, and locked for the run's whole length, so that a
    # second `run` or `--resume` on it refuses at once, naming the run that
    # holds it, instead of both measuring at the same time (on the same
    # CPUs) and the second dying half-way on a trial the first stored.
    module ResultsDir
      LOCK_FILE = ".rackbench.lock"

      module_function

      # Creates dir if needed; raises Store::Error when it cannot be
      # written (a file in the way, permissions, a read-only disk).
      def check_writable!(dir)
        Store::Connection.prepare_directory(dir)
      end

      # Holds an exclusive lock on dir while the block runs and returns the
      # block's value. The lock is an flock on dir/.rackbench.lock, so the
      # kernel drops it when the holder dies, however it dies; the file
      # keeps the holder's pid for the message. Raises UsageError when
      # another process holds it.
      def lock(dir)
        path = File.join(dir, LOCK_FILE)
        File.open(path, File::RDWR | File::CREAT, 0o644) do |file|
          unless file.flock(File::LOCK_EX | File::LOCK_NB)
            raise UsageError, "#{dir} is in use by another rackbench run (#{holder(file)}): wait for it to " \
                              "finish, or choose another --results directory"
          end
          file.truncate(0)
          file.write("#{Process.pid}\n")
          file.flush
          yield
        end
      end

      def holder(file)
        pid = file.read.to_s[/\A\d+/]
        pid ? "pid #{pid}" : "pid unknown"
      end
    end
  end
end
