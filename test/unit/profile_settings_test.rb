# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/experiments/experiment_support"

# The experiment's profile key (Profile::Settings) and the profiled trials
# it adds to the plan.
describe "profile settings and profiled trials" do
  include Rackbench::Test::ExperimentSupport

  let(:sweep) { { "servers" => %w[puma webrick], "threads" => [1, 4], "batches" => 3, "seed" => 7 } }

  def experiment(profile, **overrides)
    build_experiment(sweep.merge("profile" => profile).merge(overrides))
  end

  describe "the key" do
    it "is absent by default, and then changes nothing" do
      plain = build_experiment(sweep)
      assert_nil plain.profile
      refute plain.canonical.key?("profile")
    end

    it "takes a tool's name, or a mapping with mode, interval and trials" do
      short = experiment("stackprof").profile
      assert_equal({ "tool" => "stackprof", "mode" => "cpu", "interval" => 1000, "trials" => 1 }, short.to_h)
      assert_equal "stackprof:cpu:1000", short.env_value
      assert_equal ['gem "stackprof", ">= 0.2.16", require: false'], short.gem_lines
      full = experiment({ "tool" => "vernier", "mode" => "wall", "interval_us" => 500, "trials" => 2 }).profile
      assert_equal "vernier:wall:500", full.env_value
      assert_equal 2, full.trials
      object = experiment({ "tool" => "stackprof", "mode" => "object", "interval_objects" => 10 }).profile
      assert_equal "stackprof:object:10", object.env_value
      assert_equal "stackprof:object:1", short.with_mode("object").env_value
    end

    it "takes objspace, the census of allocations by class, in object mode only and without an interval" do
      census = experiment("objspace").profile
      assert_equal({ "tool" => "objspace", "mode" => "object", "interval" => 1, "trials" => 1 }, census.to_h)
      assert_equal "objspace:object:1", census.env_value
      assert_empty census.gem_lines, "objspace is part of CRuby, not a gem"
      assert_equal "object", Rackbench::Profile::Settings.new(tool: "objspace").mode
      assert_same census, census.with_mode("object")
      error = assert_raises(Rackbench::ConfigError) { census.with_mode("wall") }
      assert_equal "profile.tool objspace counts allocations by class: its mode is object, not wall", error.message
      assert_equal "objspace:object:1", experiment({ "tool" => "objspace", "mode" => "object" }).profile.env_value
      assert_config_error(sweep.merge("profile" => { "tool" => "objspace", "mode" => "cpu" }), "profile.mode",
                          "objspace counts allocations by class: its mode is object, not cpu")
      assert_config_error(sweep.merge("profile" => { "tool" => "objspace", "interval_objects" => 10 }),
                          "profile.interval_objects", "counts every allocation of its span")
    end

    it "is part of the fingerprint" do
      plain = build_experiment(sweep)
      refute_equal plain.fingerprint, experiment("stackprof").fingerprint
      refute_equal experiment("stackprof").fingerprint, experiment({ "tool" => "stackprof", "mode" => "object" }).fingerprint
      assert_equal plain.fingerprint, experiment("stackprof").with(profile: nil).fingerprint
    end

    it "names the key of every mistake" do
      assert_config_error(sweep.merge("profile" => "perf"), "profile.tool", "unknown profiler \"perf\"")
      assert_config_error(sweep.merge("profile" => { "tool" => "stackprof", "mode" => "cpus" }), "profile.mode",
                          "did you mean cpu?")
      assert_config_error(sweep.merge("profile" => { "tool" => "stackprof", "interval_us" => 10 }), "profile.interval_us",
                          ">= 100")
      assert_config_error(sweep.merge("profile" => { "tool" => "stackprof", "mode" => "object", "interval_us" => 1000 }),
                          "profile.interval_us", "use interval_objects")
      assert_config_error(sweep.merge("profile" => { "tool" => "stackprof", "trials" => 4 }), "profile.trials", "1-3")
      # Both sides: StackProf's cpu and Vernier's wall are taken, StackProf's wall refused with the reason.
      assert_equal "cpu", experiment({ "tool" => "stackprof", "mode" => "cpu" }).profile.mode
      assert_equal "wall", experiment({ "tool" => "vernier", "mode" => "wall" }).profile.mode
      assert_config_error(sweep.merge("profile" => { "tool" => "stackprof", "mode" => "wall" }), "profile.mode",
                          "samples only the thread that started it")
      error = assert_raises(Rackbench::ConfigError) { Rackbench::Profile::Settings.new(tool: "stackprof").with_mode("wall") }
      assert_match(/\Aprofile\.mode: StackProf's wall mode samples only the thread that started it/, error.message)
      assert_config_error(sweep.merge("profile" => { "mode" => "cpu" }), "profile.tool", "required")
      assert_config_error(sweep.merge("profile" => { "tool" => "stackprof", "every" => 1 }), "profile.every",
                          "unknown key")
    end
  end

  describe "the runnable rubies" do
    def install(engine, version)
      Rackbench::Rubies::Install.new(name: "#{engine}-#{version}", path: "/usr/bin/ruby", source: "path",
                                     engine: engine, version: version)
    end

    it "refuses vernier below Ruby 3.2.1 naming the ruby's version, and stackprof on JRuby" do
      vernier = Rackbench::Profile::Settings.new(tool: "vernier")
      assert_equal "profile.tool vernier needs Ruby >= 3.2.1; ruby-3.1.2 is ruby 3.1.2",
                   vernier.unsupported_reason(install("ruby", "3.1.2"))
      assert_nil vernier.unsupported_reason(install("ruby", "3.3.0")), "vernier runs on 3.2.1+"
      assert_equal "profile.tool vernier needs Ruby >= 3.2.1; jruby-9.4.5.0 is jruby 9.4.5.0",
                   vernier.unsupported_reason(install("jruby", "9.4.5.0"))
      stackprof = Rackbench::Profile::Settings.new(tool: "stackprof")
      assert_nil stackprof.unsupported_reason(install("ruby", "3.1.2"))
      assert_equal "profile.tool stackprof needs CRuby; jruby-9.4.5.0 is jruby 9.4.5.0",
                   stackprof.unsupported_reason(install("jruby", "9.4.5.0"))
      census = Rackbench::Profile::Settings.new(tool: "objspace", mode: "object")
      assert_nil census.unsupported_reason(install("ruby", "3.1.2"))
      assert_equal "profile.tool objspace needs CRuby; jruby-9.4.5.0 is jruby 9.4.5.0",
                   census.unsupported_reason(install("jruby", "9.4.5.0"))
    end
  end

  describe "the plan" do
    def plan(profile, **overrides)
      Rackbench::Experiment::Plan.new(experiment(profile, **overrides))
    end

    it "adds one profiled trial per configuration to each of the first profile.trials batches" do
      plain = Rackbench::Experiment::Plan.new(build_experiment(sweep))
      profiled = plan({ "tool" => "stackprof", "trials" => 2 })
      assert_equal plain.size + 4 * 2, profiled.size
      extra = profiled.trials.select(&:profiled?)
      assert_equal [1] * 4 + [2] * 4, extra.map(&:batch)
      assert_equal extra.map { |t| "#{t.config.key}#batch=#{t.batch}#profile" }, extra.map(&:key)
      assert(extra.all? { |t| t.profile.tool == "stackprof" })
      assert(plain.trials.none?(&:profiled?))
      assert_equal profiled.trials.map(&:key).uniq.size, profiled.size
      assert_equal (1..profiled.size).to_a, profiled.trials.map(&:index)
      assert_match(/\(profiled\)/, profiled.to_s)
    end

    it "keeps the plain trials in the order they have without profiling, batch by batch, profiled ones among them" do
      plain = Rackbench::Experiment::Plan.new(build_experiment(sweep))
      profiled = plan("stackprof")
      assert_equal plain.trials.map(&:key), profiled.trials.reject(&:profiled?).map(&:key)
      assert_equal profiled.trials.map(&:batch).sort, profiled.trials.map(&:batch), "batch by batch"
      assert_equal plan("stackprof").trials.map(&:key), profiled.trials.map(&:key), "seeded"
      refute_equal plan("stackprof", "seed" => 8).trials.map(&:key), profiled.trials.map(&:key)
      places = profiled.trials.first(8).each_index.select { |i| profiled.trials[i].profiled? }
      refute_equal (4..7).to_a, places, "not simply after the plain trials" # seed 7's order, fixed
    end

    it "leaves out the profiled trials of a configuration that cannot run, like its plain ones" do
      profiled = Rackbench::Experiment::Plan.new(experiment("stackprof"),
                                                 unsupported: ->(c) { c.dims["server"] == "webrick" && "no" })
      assert(profiled.trials.none? { |t| t.config.dims["server"] == "webrick" })
      assert_equal 2, profiled.trials.count(&:profiled?)
    end
  end
end
