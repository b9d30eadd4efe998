# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# Ruby variants must not leak into each other. Three variants of one ruby
# (plain, --yjit, and an env variable) share one Bundler environment per
# server; under Puma and Unicorn (forking workers), run with several seeds
# so that each variant's trial is the first of a run at least once (a
# shared environment once kept the options and variables of whichever
# variant built it first), every process of every server must report
# exactly its own variant: YJIT on in the YJIT variant and off in the two
# others, X=1 in the env variant and unset in the two others.
describe "ruby variants (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-variants") }
  let(:text) do
    <<~YAML
      name: variants
      seed: SEED
      # One batch: a leak comes from whichever variant's trial is first and
      # shows in every later trial of the other variants; a second batch
      # would only boot the same servers again.
      batches: 1
      rubies:
        - ruby
        - { name: ruby-yjit, ruby: ruby, options: ["--yjit"] }
        - { name: ruby-x, ruby: ruby, env: { X: "1" } }
      servers: [puma, unicorn]
      apps: [rack-hello]
      processes: 2
      threads: 1
      # A count of requests, not a time: a busy machine delays the window
      # but never empties it (0.5 s gave a YJIT Unicorn no answer at load
      # 9, while YJIT compiled). This test is about identity, not speed.
      load: { connections: 2, count: 200, warmup_count: 20, timeout: 5s }
    YAML
  end

  after { FileUtils.rm_rf(dir) }

  # The first seeds whose plans start with each variant in turn.
  def seeds_starting_with_each_variant
    firsts = {}
    (1..200).each do |seed|
      experiment = Rackbench::Experiment.parse(text.sub("SEED", seed.to_s))
      first = Rackbench::Experiment::Plan.new(experiment).trials.first.config.ruby.label
      firsts[first] ||= seed
      break if firsts.size == 3
    end
    assert_equal %w[ruby ruby-x ruby-yjit], firsts.keys.sort
    firsts
  end

  it "runs every process of every trial as its own variant, whichever variant comes first" do
    seeds_starting_with_each_variant.each do |first_variant, seed|
      file = File.join(dir, "seed-#{seed}.yml")
      File.write(file, text.sub("SEED", seed.to_s))
      results = File.join(dir, "results-#{seed}")
      # The shell's own settings must not reach any server either.
      shell = { "RUBY_YJIT_ENABLE" => "1", "X" => "from-the-shell", "RAILS_ENV" => "development" }
      out, err, status = rackbench("run", file, "--results", results, env: shell)
      assert status.success?, "seed #{seed} (#{first_variant} first) failed: #{err}\n#{out}"

      trials = Rackbench::Store.open(results) { |store| store.trials }
      assert_equal first_variant, trials.min_by(&:position).ruby
      assert_equal 6, trials.size
      trials.each do |trial|
        identity = trial.identity
        where = "seed #{seed}, #{trial.ruby} on #{trial.server} batch #{trial.batch}"
        assert_equal "ok", trial.status, "#{where}: #{trial.reason}"
        assert_equal 3, identity["processes"].size, "#{where}: master and 2 workers"
        assert(identity["processes"].all? { |p| p["source"] == "reported" }, where)
        want_jit = trial.ruby == "ruby-yjit" ? "yjit" : nil
        assert_equal [want_jit], identity["processes"].map { |p| p["jit"] }.uniq, "#{where}: JIT in every process"
        if trial.ruby == "ruby-x"
          assert_equal "1", identity["env"]["X"], "#{where}: X set"
        else
          assert_nil identity["env"].fetch("X"), "#{where}: X checked, and unset"
        end
        assert_equal %w[production production], identity["env"].values_at("RACK_ENV", "RAILS_ENV"), where
        assert_equal trial.server, identity["server_gem"]["name"], where
        assert_equal trial.gem_versions[trial.server], identity["server_gem"]["version"], where
        assert_equal(trial.ruby == "ruby-yjit", trial.ruby_description.include?("+YJIT"), where)
      end
    end
  end
end

require "support/test_rubies"

# A relocated copy of a ruby built from source, named by path, runs as
# itself, and so do a copy and a wrapper script of the system ruby: every
# server process of each trial reports that ruby's own description and
# executable.
describe "rubies named by path in an experiment (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-by-path") }

  after { FileUtils.rm_rf(dir) }

  it "runs the relocated 3.4.5, the copy and the wrapper as themselves, with YJIT where asked" do
    relocated, relocated_libruby = TestRubies.relocated("3.4")
    copy, wrapper = TestRubies.copy_and_wrapper
    file = File.join(dir, "by-path.yml")
    File.write(file, <<~YAML)
      name: by-path
      rubies:
        - ruby
        - { name: relocated, ruby: #{relocated} }
        - { name: relocated-yjit, ruby: #{relocated}, options: ["--yjit"] }
        - { name: copy, ruby: #{copy} }
        - { name: wrapper, ruby: #{wrapper} }
      servers: [puma]
      apps: [rack-hello]
      processes: 2
      load: { connections: 2, count: 200, warmup_count: 20, timeout: 5s } # a count: a busy machine delays it, never empties it
    YAML
    results = File.join(dir, "results")
    out, err, status = rackbench("run", file, "--results", results)
    assert status.success?, "run failed: #{err}\n#{out}"

    trials = Rackbench::Store.open(results) { |store| store.trials }.to_h { |t| [t.ruby, t] }
    system_version = RUBY_DESCRIPTION[/\Aruby (\S+)/, 1]
    expected = {
      "ruby" => [system_version, File.realpath(RbConfig.ruby), nil],
      "relocated" => ["3.4.5", File.realpath(relocated), nil],
      "relocated-yjit" => ["3.4.5", File.realpath(relocated), "yjit"],
      "copy" => [system_version, File.realpath(copy), nil],
      # A wrapper script is exec'd; what runs is the ruby it execs.
      "wrapper" => [system_version, File.realpath(RbConfig.ruby), nil]
    }
    expected.each do |label, (version, exe_path, jit)|
      identity = trials.fetch(label).identity
      assert_equal "ok", trials[label].status, "#{label}: #{trials[label].reason}"
      assert_match(/\Aruby #{Regexp.escape(version)}/, identity["description"], label)
      assert_equal exe_path, identity["exe"], label
      assert_equal 3, identity["processes"].size, "#{label}: master and 2 workers"
      assert_equal [jit], identity["processes"].map { |p| p["jit"] }.uniq, label
    end
    assert_equal relocated_libruby, trials["relocated"].identity["libruby"]
    refute_equal trials["relocated"].identity["libruby"], trials["ruby"].identity["libruby"]
  end
end
