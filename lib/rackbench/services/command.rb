# frozen_string_literal: true

require "open3"

module Rackbench
  module Services
    # A short command a service needs (initdb, psql), run to completion
    # with a deadline, in a process group of its own so that a command past
    # its deadline is KILLed whole; its output kept apart (stdout) from its
    # complaints (stderr).
    module Command
      # What a command did: its stdout and stderr (Strings), its
      # Process::Status (nil when it timed out) and whether it timed out.
      Result = Struct.new(:stdout, :stderr, :status, :timed_out, keyword_init: true) do
        def success?
          !timed_out && status&.success?
        end

        # The line that says what went wrong: the last non-empty line of
        # stderr (psql's "ERROR: ...", initdb's "initdb: error: ..."), else
        # of stdout, else how it ended.
        def error_line
          lines = [stderr, stdout].flat_map { |text| text.to_s.lines.map(&:strip).reject(&:empty?).last(1) }
          lines.first || (timed_out ? "timed out" : "exited with status #{status&.exitstatus}")
        end
      end

      module_function

      # Runs argv (without a shell) with exactly env (nothing inherited),
      # up to timeout_s seconds; returns a Result. Raises SetupError when
      # the program cannot be started.
      #
      # :chdir :: the working directory (default: "/")
      # :log :: a path that also receives what the command wrote (default: nil)
      def run(argv, env:, timeout_s:, chdir: "/", log: nil)
        stdin, stdout, stderr, waiter = Open3.popen3(env, *argv, chdir: chdir, pgroup: true, unsetenv_others: true)
        stdin.close
        readers = [stdout, stderr].map { |io| Thread.new { io.read } }
        timed_out = !wait(waiter, timeout_s)
        if timed_out
          kill_group(waiter.pid)
          waiter.join
        end
        result = Result.new(stdout: readers[0].value.to_s, stderr: readers[1].value.to_s,
                            status: timed_out ? nil : waiter.value, timed_out: timed_out)
        append_log(log, argv, result) if log
        result
      rescue SystemCallError => e
        raise SetupError, "cannot run #{argv.first}: #{e.message}"
      ensure
        [stdout, stderr].each { |io| io&.close unless io&.closed? }
      end

      # Waits for the command up to timeout_s; true when it ended.
      def wait(waiter, timeout_s)
        !waiter.join(timeout_s).nil?
      end

      def kill_group(pid)
        Process.kill(:KILL, -pid)
      rescue Errno::ESRCH, Errno::EPERM
        nil
      end

      def append_log(log, argv, result)
        File.open(log, "a") do |file|
          file.puts "# #{argv.join(" ")}"
          file.write(result.stdout, result.stderr)
        end
      rescue SystemCallError
        nil # the log is for people; never fail a service over it
      end

      private_class_method :wait, :kill_group, :append_log
    end
  end
end
