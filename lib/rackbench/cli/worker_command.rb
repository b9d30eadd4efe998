# frozen_string_literal: true

require_relative "command"
require_relative "report_options"

module Rackbench
  module CLI
    # `rackbench worker URL --testbed NAME`: one benchmark host of a fleet
    # (Fleet::Worker): claims the queue's batches for its testbed, one at a
    # time, and runs each as a local run would. Runs until Ctrl-C or TERM
    # (the batch it was running goes back to the queue), or with
    # --exit-when-idle until the queue holds nothing it can run.
    class WorkerCommand < Command
      include ReportOptions

      DEFAULT_RESULTS_DIR = "rackbench-worker"

      def run(argv)
        options = { results: DEFAULT_RESULTS_DIR, testbed: Fleet::DEFAULT_TESTBED }
        rest = parse(argv, options)
        return CLI::EXIT_OK unless rest
        raise UsageError, "worker takes one database URL (see rackbench worker --help)" if rest.size > 1

        url = rest.first || ENV.fetch(CLI::STORE_ENV, "")
        raise UsageError, "worker needs the fleet's database URL (postgres://USER@HOST/DATABASE)" if url.strip.empty?
        unless Store::Connection.server?(url)
          raise UsageError, "worker needs the fleet's PostgreSQL database (postgres://USER@HOST/DATABASE), not #{url}"
        end

        worker = Fleet::Worker.new(store: url, **options.except(:results), results_dir: options[:results],
                                   out: @out, err: @err)
        with_term_as_interrupt do
          count = worker.run
          @out.puts "no batch left to claim: #{count} run"
        end
        CLI::EXIT_OK
      rescue Interrupted => e
        @err.puts "rackbench worker: #{e.message}"
        CLI::EXIT_INTERRUPTED
      end

      private

      # TERM (a service manager, kill) stops the worker as Ctrl-C does: the
      # trial running is stopped, its batch given back to the queue.
      def with_term_as_interrupt
        previous = trap("TERM") { raise Interrupt }
        yield
      ensure
        trap("TERM", previous || "DEFAULT")
      end

      def parse(argv, options)
        parse_options(argv, "Usage: rackbench worker [options] [URL]") do |p|
          p.separator "Claims and runs the batches the fleet's database (URL, else $#{CLI::STORE_ENV}) queues for " \
                      "this host's testbed (doc/fleet.md)."
          p.on("--testbed NAME", "the testbed this host belongs to (default #{Fleet::DEFAULT_TESTBED})") do |v|
            options[:testbed] = v
          end
          p.on("--name NAME", "the host's name stored with each trial (default: the host name)") { |v| options[:name] = v }
          p.on("--results DIR", "where this worker keeps logs and work files (default #{DEFAULT_RESULTS_DIR})") do |v|
            options[:results] = v
          end
          p.on("--heartbeat DURATION", "time between heartbeats (default 5s)") do |v|
            options[:heartbeat_s] = duration_s(v, "--heartbeat")
          end
          p.on("--dead-after DURATION", "a claimed batch whose heartbeat is older goes back to the queue (default 60s)") do |v|
            options[:dead_after_s] = duration_s(v, "--dead-after")
          end
          p.on("--poll DURATION", "time between looks at an empty queue (default 2s)") { |v| options[:poll_s] = duration_s(v, "--poll") }
          p.on("--exit-when-idle", "stop when the queue holds nothing this worker can run") { options[:exit_when_idle] = true }
        end
      end
    end
  end
end
