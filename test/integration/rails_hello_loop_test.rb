# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# rails-hello's known slowdown of a fixed amount of work (RAILS_HELLO_LOOP:
# a loop of N iterations before the render), both ways, on a real Puma:
# set, every trial proves it inside the server (its check wants the body's
# "loop=N"; the identity check reports the variable each process saw);
# unset, the plain app runs (the variable reported unset, the plain body).
# One short run of both entries (time trials, 100 requests each): about
# 20 s here, two Rails boots. What the loop costs is measured in
# bench/rails_hello_loop_cost.rb and doc/performance.md.
describe "rails-hello's loop knob (integration)" do
  before { require_engine! }

  LOOP = 500

  def self.outcome
    @outcome ||= begin
      dir = Dir.mktmpdir("rackbench-rails-loop")
      file = File.join(dir, "loop.yml")
      File.write(file, <<~YAML)
        name: rails-hello-loop
        seed: 1
        rubies: [ruby]
        servers: [puma]
        apps:
          - rails-hello
          - { name: rails-hello-loop, path: #{File.expand_path("../../apps/rails-hello", __dir__)},
              env: { RAILS_HELLO_LOOP: "#{LOOP}" }, expect_content_type: text/plain, expect_body: "loop=#{LOOP}" }
        processes: 1
        threads: 1
        load: { connections: 2, count: 100, warmup: 0.5s, timeout: 5s } # a timeout given: no calibration boot
      YAML
      results = File.join(dir, "results")
      out, err, status = rackbench("run", file,
                                        "--results", results)
      { status: status, out: out, err: err, records: Rackbench::Store.open(results, &:trials), dir: dir }
    end
  end

  Minitest.after_run { FileUtils.rm_rf(outcome[:dir]) if @outcome }

  let(:outcome) { self.class.outcome }

  it "loops when set, proven inside the server: its check saw loop=N and every process the variable" do
    assert outcome[:status].success?, outcome[:err]
    looping = outcome[:records].select { |r| r.app == "rails-hello-loop" }
    assert_equal 1, looping.size
    assert(looping.all?(&:ok?), "the check wanted the body's loop=#{LOOP}: #{looping.map(&:reason).compact}")
    looping.each { |r| assert_equal LOOP.to_s, r.identity["env"]["RAILS_HELLO_LOOP"] }
  end

  it "does not loop when unset: reported unset in every process, the plain body checked" do
    plain = outcome[:records].select { |r| r.app == "rails-hello" }
    assert_equal 1, plain.size
    assert(plain.all?(&:ok?), plain.map(&:reason).compact.inspect)
    plain.each do |r|
      assert r.identity["env"].key?("RAILS_HELLO_LOOP"), "checked, since another app sets it"
      assert_nil r.identity["env"]["RAILS_HELLO_LOOP"]
    end
  end

  it "refuses a value that is not a whole number >= 0 at boot" do
    env = { "RAILS_HELLO_LOOP" => "-3" }
    script = "module ActionController; class Base; end; end; load #{File.expand_path("../../apps/rails-hello/app/controllers/hello_controller.rb", __dir__).dump}"
    _, err, status = Open3.capture3(env, RbConfig.ruby, "-e", script)
    refute status.success?
    assert_match(/RAILS_HELLO_LOOP must be >= 0, got -3/, err)
    _, err, status = Open3.capture3({ "RAILS_HELLO_LOOP" => "many" }, RbConfig.ruby, "-e", script)
    refute status.success?
    assert_match(/invalid value for Integer/, err)
  end
end
