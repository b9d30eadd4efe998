# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "sequel"
require_relative "../support/postgres_cluster"

# `run --fleet --label` with an app given by path in a git repository and
# one worker on this host (Runner::StoredExperiment): the submitter stores
# the experiment once, with its --label pairs and the app's revision; the
# worker proves its checkout is at that revision and stores its trials
# into that one experiment; a worker whose checkout has moved refuses the
# batches in one line instead of measuring another revision under it.
describe "a fleet run with labels" do
  let(:dir) { Dir.mktmpdir("rackbench-fleet-labels") }
  let(:app) { File.join(dir, "labelled") }
  after { FileUtils.rm_rf(dir) }

  def git(*args)
    out, status = Open3.capture2e("git", "-C", app, "-c", "user.name=t", "-c", "user.email=t@example.com", *args)
    assert status.success?, out
    out.strip
  end

  # A user's app of two commits; its checkout at the second.
  def app_repository
    FileUtils.mkdir_p(app)
    File.write(File.join(app, "Gemfile"), "source \"https://rubygems.org\"\n")
    File.write(File.join(app, "config.ru"), "run ->(_env) { [200, { \"content-type\" => \"text/plain\" }, [\"one\\n\"]] }\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "first")
    File.write(File.join(app, "config.ru"), "run ->(_env) { [200, { \"content-type\" => \"text/plain\" }, [\"labelled\\n\"]] }\n")
    git("commit", "-q", "-am", "second")
    git("rev-parse", "HEAD")
  end

  def experiment_file
    File.join(dir, "labelled.yml").tap do |path|
      File.write(path, <<~YAML)
        name: fleet-labels
        seed: 5
        batches: 2
        servers: [puma]
        apps: [{ name: labelled, path: #{app}, expect_body: labelled }]
        threads: 1
        load: { duration: 0.5s, warmup: 0.2s, connections: 2, timeout: 5s }
      YAML
    end
  end

  # Runs exe/rackbench (Test::Cli) with stdout and stderr together.
  def rackbench2e(*args)
    Open3.capture2e(Rackbench::Test::Cli.env, *cli_argv(*args), stdin_data: "")
  end

  def worker(url, name)
    rackbench2e("worker", url, "--testbed", "lab", "--name", name, "--results", File.join(dir, name), "--poll", "0.2s",
                "--exit-when-idle")
  end

  it "stores one experiment with the --label pairs and the app's revision, which the worker proves" do
    commit = app_repository
    file = experiment_file
    # The host has its gems before it claims, as a provisioned host would.
    out, status = rackbench2e("check", file, "--results", File.join(dir, "check"))
    assert status.success?, out
    Rackbench::Test::PostgresCluster.open do |pg|
      pg.create_database("labels")
      url = pg.url("labels")
      out, status = rackbench2e("run", file, "--fleet", url, "--testbed", "lab", "--label", "pr=42", "--detach")
      assert status.success?, out

      out, status = worker(url, "bench")
      assert status.success?, out
      follow, status = rackbench2e("run", file, "--fleet", url, "--testbed", "lab", "--label", "pr=42", "--resume",
                                   "--results", File.join(dir, "follow"))
      assert status.success?, follow
      assert_match(/^2 ok, 0 failed/, follow)

      Sequel.connect(url, keep_reference: false) do |db|
        experiments = db[:experiments].all
        assert_equal 1, experiments.size, "one experiment, made by the submitter, used by the worker"
        labels = JSON.parse(experiments.first[:labels])
        assert_equal({ "pr" => "42" }, labels["given"])
        revision = labels["revisions"].find { |r| r["of"] == "app" && r["name"] == "labelled" }
        assert_equal commit, revision && revision["commit"]
        assert_equal [experiments.first[:id]], db[:trials].select_map(:experiment_id).uniq
        assert_equal 2, db[:trials].where(status: "ok").count

        # The checkout moves back a commit: the worker refuses the batches
        # of a rerun instead of measuring the first commit under the second.
        db[:fleet_batches].update(state: "queued", worker_id: nil)
        git("checkout", "-q", "HEAD~1")
        out, status = worker(url, "moved")
        assert status.success?, out
        assert_match(/not claiming experiment fleet-labels \(id \d+\): this host would run another revision than .*: app labelled: \h{10} here, #{commit[0, 10]} queued/, out)
        assert_equal 2, db[:trials].count, "nothing measured at the other revision"
      end
    end
  end
end
