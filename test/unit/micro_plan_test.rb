# frozen_string_literal: true

require "test_helper"

describe Rackbench::Micro::Plan do
  def install(name, engine)
    Rackbench::Rubies::Install.new(name: name, path: "/opt/#{name}/bin/ruby", source: :path, engine: engine,
                                   version: "1.0", ruby_version: "3.1.2", description: "#{name} 1.0")
  end

  def variants(*installs)
    installs.to_h { |i| [i.name, Rackbench::Rubies::Variant.new(install: i)] }
  end

  def settings(**options)
    Rackbench::Micro::Settings.build(workers: "1,10", batches: 2, seed: 5, **options)
  end

  let(:cruby) { variants(install("ruby", "ruby")) }

  it "runs every (ruby, mode, workers) once per batch, batch by batch" do
    plan = Rackbench::Micro::Plan.new(settings, cruby)
    assert_equal 12, plan.size
    assert_equal [1] * 6 + [2] * 6, plan.map(&:batch)
    assert_equal (1..12).to_a, plan.map(&:index)
    plan.group_by(&:batch).each_value do |trials|
      assert_equal plan.configurations.map(&:key).sort, trials.map { |t| t.config.key }.sort
    end
    assert_equal 12, plan.map(&:key).uniq.size
    assert(plan.all? { |t| t.key == "#{t.config.key}#batch=#{t.batch}" })
  end

  it "shuffles each batch with Random.new(seed + batch): same seed, same order; another seed, another" do
    first = Rackbench::Micro::Plan.new(settings, cruby).map(&:key)
    assert_equal first, Rackbench::Micro::Plan.new(settings, cruby).map(&:key)
    assert_equal first, Rackbench::Micro::Plan.new(settings(workers: "10,1", modes: "fibers,threads,processes"), cruby).map(&:key)
    refute_equal first, Rackbench::Micro::Plan.new(settings(seed: 6), cruby).map(&:key)

    base = Rackbench::Micro::Plan.new(settings, cruby).configurations.sort_by(&:key)
    expected = base.shuffle(random: Random.new(5 + 1)).map { |c| "#{c.key}#batch=1" }
    assert_equal expected, first.first(6)
  end

  it "fills dims as the HTTP runner does: ruby, server (the mode), app, processes, threads, plus workers" do
    plan = Rackbench::Micro::Plan.new(settings(workers: "10"), cruby)
    dims = plan.configurations.to_h { |c| [c.mode, c.dims] }
    assert_equal({ "ruby" => "ruby", "server" => "threads", "app" => "micro-fibers", "processes" => 1, "threads" => 10,
                   "workers" => 10 }, dims["threads"])
    assert_equal [10, 1], dims["processes"].values_at("processes", "threads")
    assert_equal [1, 1], dims["fibers"].values_at("processes", "threads")
    config = plan.configurations.first
    assert_equal Rackbench::Experiment::Canonical.json(config.dims), config.key
    assert_equal "ruby=ruby mode=threads workers=10", config.to_s
    assert_equal 10_000, config.messages
  end

  it "leaves forked workers out up front on rubies without fork, keeping the others' order" do
    both = variants(install("ruby", "ruby"), install("jruby", "jruby"))
    plan = Rackbench::Micro::Plan.new(settings, both)
    assert_equal 2 * (6 + 4), plan.size
    assert_equal 2, plan.skipped.size
    assert(plan.skipped.all? { |s| s.config.ruby == "jruby" && s.config.mode == "processes" })
    assert_equal ["fork is not available on jruby"], plan.skipped.map(&:reason).uniq
    refute(plan.any? { |t| t.config.ruby == "jruby" && t.config.mode == "processes" })
  end

  it "lists what remains to run after some trials are stored" do
    plan = Rackbench::Micro::Plan.new(settings, cruby)
    done = plan.trials.first(5).map(&:key)
    assert_equal plan.trials.drop(5), plan.remaining(done)
  end
end
