# frozen_string_literal: true

require "test_helper"
require "json"
require "rackbench/servers/passenger/agent_plan"

# What the plan says about Passenger's agent before anything is installed:
# its compile with an estimate when neither the ruby's gems nor this
# machine's agents have it, nothing when one of them has. Over directories
# laid out as bundles and compiles leave them (no process: the compiler's
# line is given).
describe Rackbench::Servers::PassengerAgentPlan do
  AgentPlanInstall = Struct.new(:engine, :abi_version, :path, keyword_init: true)

  before do
    @dir = Dir.mktmpdir("rackbench-agent-plan")
    @bundles = File.join(@dir, "bundles")
    @agents = Rackbench::Servers::PassengerAgents.new(root: File.join(@dir, "passenger-agents"), compiler: "g++ 12.2.0\n")
    @install = AgentPlanInstall.new(engine: "ruby", abi_version: "3.4.0", path: "/opt/ruby-3.4/bin/ruby")
  end

  after { FileUtils.rm_rf(@dir) }

  def plan = Rackbench::Servers::PassengerAgentPlan.new(@install, agents: @agents, bundles_root: @bundles)

  # The passenger gem of +version+ installed in the install's gems, its agent compiled there or not.
  def installed(version, agent: false)
    gem = File.join(Rackbench::BundleEnv.gem_dir(@install, root: @bundles), "gems", "passenger-#{version}")
    FileUtils.mkdir_p(File.join(gem, "buildout", "support-binaries"))
    agent_file(File.join(gem, "buildout", "support-binaries", "PassengerAgent")) if agent
  end

  # An agent kept on this machine, with the record of its compile.
  def kept(version, duration_s: 300.0, compiled_at: "2026-12-01T10:00:00Z")
    agent_file(@agents.agent_path(version))
    File.write(File.join(@agents.dir(version), "build.json"),
               JSON.generate("version" => version, "compiler" => "g++ 12.2.0", "compiled_at" => compiled_at,
                             "duration_s" => duration_s, "objects" => 92))
  end

  def agent_file(path)
    FileUtils.mkdir_p(File.dirname(path))
    File.write(path, "#!/bin/sh\n")
    File.chmod(0o755, path)
  end

  it "plans the compile with a guess of its time on a machine that never compiled one" do
    step = plan.preparation
    assert_equal "compile Passenger's agent (once for every ruby, then cached)", step.text
    assert_equal Rackbench::Servers::PassengerAgentPlan::FIRST_COMPILE_GUESS_S, step.estimate_s
    assert_match(/guessed/, step.basis)
  end

  it "plans nothing when the version the gems hold has its agent kept on this machine, or in the gem" do
    installed("6.2.1")
    kept("6.2.1")
    assert plan.ready?
    assert_nil plan.preparation

    FileUtils.rm_rf(@agents.dir("6.2.1"))
    refute plan.ready?, "the gem alone has no agent"
    installed("6.2.1", agent: true)
    assert_nil plan.preparation
  end

  it "plans nothing for a ruby without the gem yet when this machine keeps an agent (it is copied)" do
    kept("6.2.1")
    assert_equal "6.2.1", plan.version
    assert_nil plan.preparation
  end

  it "plans the compile of the version the gems hold when only another one's agent is kept, timed as that one" do
    kept("6.2.1", duration_s: 251.7)
    installed("6.3.0")
    step = plan.preparation
    assert_equal "compile Passenger 6.3.0's agent (once for every ruby, then cached)", step.text
    assert_equal 251.7, step.estimate_s
    assert_equal "as Passenger 6.2.1's took here on 2026-12-01", step.basis
    assert_equal "passenger-agent-6.3.0", step.key
  end

  it "keeps another compiler's agents apart: a new compiler compiles its own" do
    kept("6.2.1")
    installed("6.2.1")
    other = Rackbench::Servers::PassengerAgents.new(root: @agents.root, compiler: "g++ 13.1.0\n")
    refute Rackbench::Servers::PassengerAgentPlan.new(@install, agents: other, bundles_root: @bundles).ready?
    assert_equal ["6.2.1"], @agents.versions
    assert_empty other.versions
    assert_equal 300.0, other.last_build.duration_s, "its time still estimates the next compile"
  end
end
