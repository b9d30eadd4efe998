# frozen_string_literal: true

require "json"
require "shellwords"
require "tempfile"

module Rackbench
  module Publish
    # --on-regression COMMAND: a command run once per new regression, its
    # regression document (doc/output.md) on standard input, to open an
    # issue (`gh issue create`), post to a chat, page someone
    # (doc/examples/nightly/announce-regression.sh). A regression counts as
    # announced when the command exits 0; one whose command failed (or
    # timed out) is tried again at the next publish, so nothing is lost and
    # nothing is announced twice. Only open regressions (detected or
    # confirmed) are announced.
    #
    # The command is split as a shell would split it but run without one,
    # with rackbench's environment (a token it needs comes through), in a
    # process group of its own, stopped (TERM, then KILL) past its deadline
    # and always reaped.
    class Hook
      DEFAULT_TIMEOUT_S = 120
      STOP_GRACE_S = 5.0

      # command :: the command line; :site_url :: the site's URL, for the
      # "url" given to it (default: nil: a path relative to the site)
      def initialize(command, timeout_s: DEFAULT_TIMEOUT_S, site_url: nil)
        @argv = Shellwords.split(command.to_s)
        raise UsageError, "--on-regression needs a command" if @argv.empty?

        @timeout_s = timeout_s
        @base = site_url && "#{site_url.chomp("/")}/"
      rescue ArgumentError => e
        raise UsageError, "--on-regression: #{e.message}"
      end

      # Runs the command for every open regression of +all+ not announced
      # yet, marking each it accepted (Regressions#announced). Returns
      # [announced ids, failures (one line each)].
      def announce(regressions, all)
        announced = []
        failures = []
        all.select { |r| r.open? && r.announced_at.nil? }.sort_by(&:id).each do |regression|
          problem = call(regression)
          if problem
            failures << "regression ##{regression.id}: #{problem} (tried again at the next publish)"
          else
            regressions.announced(regression.id, "#{File.basename(@argv.first)} accepted it")
            announced << regression.id
          end
        end
        [announced, failures]
      end

      private

      # nil when the command exits 0 with the regression's document on its
      # standard input, else why not, in a few words.
      def call(regression)
        doc = regression.to_h.merge("url" => "#{@base}regressions/#{regression.id}.html")
        Tempfile.create("rackbench-regression") do |input|
          input.write(JSON.pretty_generate(doc))
          input.flush
          run(input.path)
        end
      end

      def run(input_path)
        reader, writer = IO.pipe
        pid = Process.spawn([@argv.first, @argv.first], *@argv.drop(1), in: input_path, out: writer, err: writer,
                                                                       pgroup: true)
        writer.close
        output = Thread.new { reader.read }
        waiter = Process.detach(pid)
        return "#{@argv.first} did not finish within #{@timeout_s} s" unless waiter.join(@timeout_s)

        status = waiter.value
        return nil if status.success?

        last = output.join(STOP_GRACE_S) && output.value.to_s.lines.last(2).map(&:strip).join(" ")
        "#{@argv.first} exited with #{status.exitstatus || "signal #{status.termsig}"}#{": #{last}" unless last.to_s.empty?}"
      rescue SystemCallError => e
        "cannot run #{@argv.first}: #{e.message.sub(/ - .*/, "")}"
      ensure
        stop(pid, waiter) if waiter&.alive?
        # Whatever the command left running in its group goes with it.
        signal(pid, "KILL") if pid
        output&.kill
        [reader, writer].each { |io| io.close if io && !io.closed? }
      end

      def stop(pid, waiter)
        signal(pid, "TERM")
        return if waiter.join(STOP_GRACE_S)

        signal(pid, "KILL")
        waiter.join
      end

      def signal(pid, name)
        Process.kill(name, -pid)
      rescue Errno::ESRCH, Errno::EPERM
        nil
      end
    end
  end
end
