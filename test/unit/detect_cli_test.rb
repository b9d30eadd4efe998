# frozen_string_literal: true

require "test_helper"
require "stringio"
require "rackbench/cli"
require "rackbench/cli/run_command"

# `rackbench run --detect` on the command line: the options, their errors,
# the plan made for the most batches, and the command that resumes.
describe "rackbench run --detect (command line)" do
  let(:dir) { Dir.mktmpdir("rackbench-detect-cli") }
  let(:file) do
    File.join(dir, "aa.yml").tap do |path|
      File.write(path, <<~YAML)
        name: aa
        batches: 3
        rubies: [ruby]
        servers: [{ name: puma, label: puma-a }, { name: puma, label: puma-b }]
        apps: [rack-hello]
        load: { duration: 1s, warmup: 0s }
      YAML
    end
  end

  after { FileUtils.rm_rf(dir) }

  # The experiment run would run (the CLI's --dry-run would also discover
  # the machine's rubies: slow here).
  def planned(*argv)
    command = Rackbench::CLI::RunCommand.new(out: StringIO.new, err: StringIO.new)
    options = { results: dir }
    command.send(:parse, [file, *argv], options)
    options[:detect] = command.send(:detect_settings, options)
    [command.send(:load_experiment, file, options), options[:detect]]
  end

  it "plans the most batches with --detect, and the file's without (the other side)" do
    experiment, detect = planned("--detect", "2%", "--max-batches", "7", "--pilot-batches", "3", "--time-budget", "20m")
    assert_equal 7, experiment.batches
    assert_equal Rackbench::Detect::Settings.new(effect: 0.02, max_batches: 7, pilot_batches: 3, time_budget_s: 1200.0),
                 detect
    experiment, detect = planned
    assert_equal 3, experiment.batches
    assert_nil detect
    assert_equal 50, planned("--detect", "1%").first.batches, "--max-batches defaults to 50"
  end

  it "refuses the detect options without --detect, --batches with it, and bad values, in one line" do
    { %w[--max-batches 9] => "--max-batches only works with --detect",
      %w[--pilot-batches 3 --time-budget 5m] => "--pilot-batches, --time-budget only work with --detect",
      %w[--detect 2% --batches 9] => "--detect chooses the batches; use --max-batches instead of --batches",
      %w[--detect 2% --max-batches 3] => "--max-batches must be an integer >= the pilot's 5 batches, got 3",
      %w[--detect 2% --time-budget soon] => "--time-budget takes a duration such as 30m, 90s or 1h, got 'soon'",
      %w[--detect lots] => "--detect takes a percentage" }.each do |args, message|
      code, _, err = cli("run", file, "--dry-run", *args)
      assert_equal Rackbench::CLI::EXIT_USAGE, code, args.join(" ")
      assert_includes err, message
      assert_equal 1, err.lines.size
    end
  end

  it "resumes with the same detect settings, so the plan and the decision are the same" do
    command = Rackbench::CLI::RunCommand.new(out: StringIO.new, err: StringIO.new)
    options = { results: "r", baseline: "server=puma-b",
                detect: Rackbench::Detect::Settings.new(effect: 0.015, pilot_batches: 4, max_batches: 30, time_budget_s: 600.0) }
    assert_equal %w[rackbench run aa.yml --resume --results r --baseline server=puma-b --detect 1.5% --pilot-batches 4
                    --max-batches 30 --time-budget 600.0s],
                 command.send(:resume_command, ["aa.yml"], options)
    assert_equal %w[rackbench run aa.yml --resume --results r],
                 command.send(:resume_command, ["aa.yml"], { results: "r" }), "nothing added without --detect"
  end

  it "plans and judges on CPU per request with --detect-measure cpu, which needs the agent" do
    _, detect = planned("--detect", "2%", "--detect-measure", "cpu")
    assert_equal "cpu", detect.measure
    assert_equal "rps", planned("--detect", "2%").last.measure
    command = Rackbench::CLI::RunCommand.new(out: StringIO.new, err: StringIO.new)
    words = command.send(:resume_command, [file], { results: dir, detect: detect })
    assert_equal %w[--detect-measure cpu], words.last(2)
    File.write(file, File.read(file) + "inside: off\n")
    status, _, err = cli("run", file, "--results", dir, "--detect", "2%", "--detect-measure", "cpu")
    assert_equal Rackbench::CLI::EXIT_USAGE, status
    assert_match(/--detect-measure cpu needs the in-server agent, but .* sets inside: off/, err)
    status, _, err = cli("run", file, "--results", dir, "--detect-measure", "cpu")
    assert_equal Rackbench::CLI::EXIT_USAGE, status
    assert_match(/--detect-measure only works with --detect/, err)
  end
end
