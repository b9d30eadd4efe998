# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require_relative "../support/report_store"
require_relative "../support/real_profiles"
require "rackbench/cli"
require "rackbench/cli/profile_command"

# `rackbench profile` (its plan and options; a real run is in
# test/integration/profile_test.rb) and the speedscope export of
# `report --speedscope`.
describe "rackbench profile and --speedscope" do
  let(:root) { Dir.mktmpdir("rackbench-profile-cli") }
  after { FileUtils.rm_rf(root) }

  def experiment_file(extra = "")
    File.join(root, "exp.yml").tap do |path|
      File.write(path, <<~YAML + extra)
        name: profile-cli
        batches: 3
        servers: [puma]
        apps: [rack-hello]
        threads: [1, 2]
        load: { duration: 1s, warmup: 0s, timeout: 2s }
      YAML
    end
  end

  # The experiment `rackbench profile` runs for file and mode (the CLI's
  # --dry-run would also discover the machine's rubies: slow here; the
  # integration test runs the command whole).
  def profiled(file, mode = nil)
    command = Rackbench::CLI::ProfileCommand.new(out: StringIO.new, err: StringIO.new)
    command.send(:profiled, Rackbench::Experiment.load(file), mode)
  end

  it "plans only one profiled trial per configuration, in cpu mode unless told, into its own results directory" do
    experiment = profiled(experiment_file)
    trials = Rackbench::Experiment::Plan.new(experiment).trials
    assert_equal 2, trials.size
    assert(trials.all? { |t| t.profiled? && t.batch == 1 })
    assert_equal "stackprof:cpu:1000", experiment.profile.env_value
    assert_equal "rackbench-profile", Rackbench::CLI::ProfileCommand::DEFAULT_RESULTS_DIR
  end

  it "takes the file's profile key, and --mode over it" do
    file = experiment_file("profile: { tool: stackprof, mode: cpu, interval_us: 500, trials: 2 }\n")
    assert_equal 4, Rackbench::Experiment::Plan.new(profiled(file)).trials.count(&:profiled?)
    assert_equal 4, Rackbench::Experiment::Plan.new(profiled(file)).size
    assert_equal "stackprof:cpu:500", profiled(file).profile.env_value
    object = profiled(file, "object")
    assert_equal ["stackprof:object:1", true], [object.profile.env_value, object.profile_only]
    refute_equal Rackbench::Experiment.load(file).fingerprint, object.fingerprint,
                 "stored apart from the measured experiment"
  end

  it "refuses a mode it does not know and a missing file, in one line" do
    code, _, err = cli("profile", experiment_file, "--mode", "heap")
    assert_equal Rackbench::CLI::EXIT_USAGE, code
    assert_match(/invalid argument: --mode heap/, err)
    code, _, err = cli("profile")
    assert_equal Rackbench::CLI::EXIT_USAGE, code
    assert_match(/profile takes one experiment file/, err)
  end

  describe "report --speedscope" do
    def results_dir(profiled:)
      dir = File.join(root, "results")
      dims = ReportStore.dims(ruby: "ruby")
      Rackbench::Store.open(dir) do |store|
        id = ReportStore.fill(store, { dims => [1000, 1010, 990] })
        if profiled
          record = ReportStore.trial(dims, 1, 4, 10.0, nil)
          key = "#{record.key}#profile"
          profile = Rackbench::Profile::Dump.from_results(RealProfiles.work, pid: 1)
          mark = Rackbench::Profile::Settings.new(tool: "stackprof", mode: "object").to_h
                                            .merge("file" => Rackbench::Profile::Files.write(dir, key, profile))
          store.save_trial(id, record.with(key: key, load_settings: { "profile" => mark }))
        end
      end
      dir
    end

    it "writes the profiles as a speedscope file, one sampled profile per configuration" do
      path = File.join(root, "out.speedscope.json")
      code, out, err = cli("report", "--results", results_dir(profiled: true), "--speedscope", path)
      assert_equal 0, code, err
      assert_match(/Top frames by self:/, out)
      assert_includes err, "Speedscope profile: #{path}"
      doc = JSON.parse(File.read(path))
      assert_equal [["sampled", "none", Rackbench::Report.config_id(ReportStore.dims(ruby: "ruby"))]],
                   doc["profiles"].map { |p| p.values_at("type", "unit", "name") }
      assert_equal "https://www.speedscope.app/file-format-schema.json", doc["$schema"]
    end

    it "says so when the experiment has no profiled trial" do
      path = File.join(root, "none.json")
      code, _, err = cli("report", "--results", results_dir(profiled: false), "--speedscope", path)
      assert_equal Rackbench::CLI::EXIT_USAGE, code
      assert_match(/experiment synthetic has no profiled trials: nothing for --speedscope/, err)
      refute File.exist?(path)
    end
  end
end
