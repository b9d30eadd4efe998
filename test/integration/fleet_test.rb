# frozen_string_literal: true

require "test_helper"
require "open3"
require "sequel"
require_relative "../support/postgres_cluster"
require_relative "../support/test_network"

# The fleet with real parts on this machine: a PostgreSQL cluster the test
# starts, two benchmark hosts as network namespaces on a bridge, each
# running `rackbench worker` (real puma servers, the real engine, the real
# guard), and `rackbench run --fleet` following the queue.
#
# An experiment of 3 configurations x 4 batches. One worker is killed
# (kill -9) in the middle of a batch: its batch goes back to the queue
# after the heartbeat timeout and runs whole on the other worker, its
# stored trials kept as earlier attempts, and nothing of it is left
# running in its namespace. Every batch runs wholly on one host, every
# trial is stored exactly once, and the report names the hosts.
describe "a fleet of two workers, one killed" do
  ROOT = File.expand_path("../..", __dir__)

  let(:dir) { Dir.mktmpdir("rackbench-fleet") }
  after { FileUtils.rm_rf(dir) }

  def experiment_file
    File.join(dir, "fleet.yml").tap do |path|
      File.write(path, <<~YAML)
        name: fleet-proof
        seed: 11
        batches: 4
        servers: [puma]
        apps: [rack-hello]
        threads: [1, 2, 4]
        # A count of requests, not a second: at load 7.5 a 1-s window of
        # Puma's 2 threads got no answer and the trial failed.
        load: { count: 200, warmup_count: 20, connections: 4, timeout: 5s }
      YAML
    end
  end

  def log_tail(path)
    File.file?(path) ? File.read(path).lines.last(30).join : "(no log)"
  end

  it "runs each batch whole on one host, re-runs the dead worker's batch on the other, stores every trial once" do
    Rackbench::Test::TestNetwork.open do |net|
      Rackbench::Test::PostgresCluster.open(listen: [net.gateway]) do |pg|
        pg.create_database("fleet")
        url = pg.url("fleet", host: net.gateway)
        file = experiment_file
        env = { "RACKBENCH_STORE" => nil }

        # Each host has its gems before it claims (as a provisioned host
        # would): the namespaces reach no gem mirror.
        out, status = Open3.capture2e(Rackbench::Test::Cli.env(env), *cli_argv("check", file, "--results", File.join(dir, "check")))
        assert status.success?, out
        out, status = Open3.capture2e(Rackbench::Test::Cli.env(env), *cli_argv("run", file, "--fleet", url, "--testbed", "lab", "--detach"))
        assert status.success?, out
        assert_match(/Experiment fleet-proof \(id 1\): 4 batches of 3 configurations for testbed lab .*: 4 queued/, out)

        hosts = %w[bench-a bench-b].map { |name| net.add_host(name) }
        logs = hosts.to_h { |h| [h.name, File.join(dir, "#{h.name}.log")] }
        workers = {}
        start_worker = lambda do |host|
          workers[host.name] = net.spawn(host, *cli_argv("worker", url, "--testbed", "lab", "--results",
                                                               File.join(dir, host.name), "--heartbeat", "1s",
                                                               "--dead-after", "6s", "--poll", "0.3s"),
                                         env: Rackbench::Test::Cli.env(env), out: logs[host.name], err: [:child, :out], chdir: dir)
        end

        Sequel.connect(pg.url("fleet"), keep_reference: false) do |db|
          by_worker = lambda do |name, state|
            db[:fleet_batches].join(:fleet_workers, id: :worker_id).where(name: name, state: state)
                              .select_map(Sequel[:fleet_batches][:batch])
          end
          # bench-a first, bench-b once bench-a holds batch 1: bench-a then
          # claims a second batch while bench-b runs batch 2.
          start_worker.call(hosts.first)
          # Each wait lasts as long as the worker runs; its deadline guards
          # against a hang, scaled by how busy the machine is now.
          wait_while_running(workers["bench-a"], timeout_s: 120 * busy_factor, interval_s: 0.05,
                                                 message: "bench-a's first claim") do
            by_worker.call("bench-a", "claimed").any?
          end
          start_worker.call(hosts.last)
          # bench-a in the middle of its second batch: claimed, some of its
          # trials stored, not all.
          victim = wait_while_running(workers["bench-a"], timeout_s: 300 * busy_factor, interval_s: 0.05,
                                                          message: "bench-a in the middle of its second batch") do
            next nil if by_worker.call("bench-a", "done").empty?

            claimed = by_worker.call("bench-a", "claimed")
            claimed.find do |batch|
              stored = db[:trials].where(batch: batch, host: "bench-a").count
              stored.between?(1, 2)
            end
          end
          Process.kill(:KILL, workers["bench-a"])
          Process.wait(workers["bench-a"])
          partial = db[:trials].where(batch: victim, host: "bench-a").select_map(:key)

          # The guard stops the dead worker's server and engine.
          wait_until(timeout_s: 60 * busy_factor, interval_s: 0.2, message: "nothing left in bench-a's namespace") do
            net.pids(hosts.first).empty?
          end

          # --wide: the Hosts section's heading, whole on one line, is what is matched below.
          follow, status = Open3.capture2e(Rackbench::Test::Cli.env(env), *cli_argv("run", file, "--fleet", url, "--testbed", "lab", "--resume", "--wide",
                                                                "--results", File.join(dir, "follow")))
          assert status.success?, "#{follow}\n--- bench-b:\n#{log_tail(logs["bench-b"])}"

          trials = db[:trials].order(:id).all
          assert_equal 12, trials.size
          assert_equal 12, trials.map { |t| t[:key] }.uniq.size, "every trial stored exactly once"
          trials.group_by { |t| t[:batch] }.each do |batch, rows|
            assert_equal 3, rows.size
            assert_equal 1, rows.map { |t| t[:host] }.uniq.size, "batch #{batch} ran on one host"
          end
          assert(trials.all? { |t| t[:status] == "ok" }, trials.reject { |t| t[:status] == "ok" }.map { |t| t[:reason] }.inspect)
          rerun = trials.select { |t| t[:batch] == victim }
          assert_equal ["bench-b"], rerun.map { |t| t[:host] }.uniq, "the killed worker's batch ran again on the other"
          assert_equal %w[bench-a bench-b], trials.map { |t| t[:host] }.uniq.sort
          history = db[:trial_history].all
          assert_equal partial.sort, history.map { |t| t[:key] }.sort, "the partial attempt is kept as history"
          assert(history.all? { |t| t[:host] == "bench-a" && t[:attempt] == 1 })
          assert(rerun.select { |t| partial.include?(t[:key]) }.all? { |t| t[:attempt] == 2 })
          batches = db[:fleet_batches].order(:batch).all
          assert_equal %w[done], batches.map { |b| b[:state] }.uniq
          assert_equal 2, batches.find { |b| b[:batch] == victim }[:claims]
          assert_includes db[:runs].select_map(:status), "interrupted", "the dead worker's run"

          assert_match(/batch #{victim}: claimed by bench-b \(claim 2, run again whole\)/, follow)
          assert_match(/^Hosts .*\n  bench-a: batches [\d,]+, \d+ ok.*\n  bench-b: batches [\d,]+, \d+ ok/, follow)
          assert_match(/^\d trials? retried, \d earlier attempts? \(0 failed\) kept/, follow)
          assert_match(/^12 ok, 0 failed/, follow)
        end
      ensure
        workers&.each_value do |pid|
          Process.kill(:TERM, pid)
        rescue Errno::ESRCH
          nil
        end
        workers&.each_value do |pid|
          Process.wait(pid)
        rescue Errno::ECHILD
          nil
        end
      end
    end
  end
end
