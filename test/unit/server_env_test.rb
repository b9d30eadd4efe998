# frozen_string_literal: true

require "test_helper"

describe Rackbench::Trial::ServerEnv do
  ServerEnv = Rackbench::Trial::ServerEnv
  BundleVars = Struct.new(:bundle_variables)

  # A shell as users have it: exported development settings, a JIT switch,
  # a preload, and what `bundle exec rackbench` adds.
  SHELL = {
    "PATH" => "/gems/bin:/usr/bin:/bin", "BUNDLER_ORIG_PATH" => "/usr/bin:/bin", "HOME" => "/home/u", "USER" => "u",
    "LANG" => "C.UTF-8", "LC_ALL" => "C.UTF-8", "TZ" => "UTC", "TERM" => "xterm",
    "RAILS_ENV" => "development", "RACK_ENV" => "development", "RUBY_YJIT_ENABLE" => "1",
    "LD_PRELOAD" => "/usr/lib/libjemalloc.so.2", "RUBYOPT" => "-rbundler/setup", "GEM_HOME" => "/gems",
    "DATABASE_URL" => "postgres://secret", "BUNDLE_GEMFILE" => "/work/main/Gemfile", "MALLOC_ARENA_MAX" => "8"
  }.freeze

  let(:bundle) { BundleVars.new({ "BUNDLE_GEMFILE" => "/cache/app/Gemfile", "BUNDLE_FROZEN" => "true" }) }

  def build(**options)
    ServerEnv.new(parent: SHELL, bundle: bundle, **options)
  end

  it "takes nothing from the shell but the machine's basics" do
    env = build
    assert_equal({ "PATH" => "/usr/bin:/bin", "HOME" => "/home/u", "USER" => "u", "LANG" => "C.UTF-8",
                   "LC_ALL" => "C.UTF-8", "TZ" => "UTC", "BUNDLE_GEMFILE" => "/cache/app/Gemfile",
                   "BUNDLE_FROZEN" => "true", "RACK_ENV" => "production", "RAILS_ENV" => "production",
                   "RACKBENCH_IDENTITY_ENV" => "RACK_ENV,RAILS_ENV" }, env.to_h)
    %w[RUBY_YJIT_ENABLE LD_PRELOAD RUBYOPT GEM_HOME DATABASE_URL MALLOC_ARENA_MAX TERM].each do |name|
      refute env.to_h.key?(name), "#{name} leaked from the shell"
    end
    assert_equal "machine", env.sources["PATH"]
    assert_equal "rackbench", env.sources["RAILS_ENV"]
    assert_equal "bundle", env.sources["BUNDLE_GEMFILE"]
  end

  it "layers server, app, ruby variant and experiment, each winning over the ones before" do
    env = build(server_env: { "A" => "server", "B" => "server" }, app_env: { "B" => "app", "C" => "app" },
                ruby_env: { "C" => "ruby", "D" => "ruby" }, experiment_env: { "D" => "experiment" })
    assert_equal %w[server app ruby experiment], %w[A B C D].map { |name| env[name] }
    assert_equal %w[server app ruby experiment], %w[A B C D].map { |name| env.sources[name] }
  end

  it "unsets what a ruby variant sets to nil" do
    env = build(app_env: { "X" => "1" }, ruby_env: { "X" => nil })
    refute env.to_h.key?("X")
    assert_equal({ "RACK_ENV" => "production", "RAILS_ENV" => "production", "X" => nil }, env.checked)
  end

  it "moves RAILS_ENV with RACK_ENV when only one is set, and keeps both when both are" do
    assert_equal %w[staging staging], build(experiment_env: { "RAILS_ENV" => "staging" }).to_h.values_at("RACK_ENV", "RAILS_ENV")
    assert_equal %w[test test], build(app_env: { "RACK_ENV" => "test" }).to_h.values_at("RACK_ENV", "RAILS_ENV")
    both = build(app_env: { "RACK_ENV" => "a" }, experiment_env: { "RAILS_ENV" => "b" })
    assert_equal %w[a b], both.to_h.values_at("RACK_ENV", "RAILS_ENV")
    assert_equal "follows RAILS_ENV", build(experiment_env: { "RAILS_ENV" => "x" }).sources["RACK_ENV"]
  end

  it "takes the variables named in pass_env from the shell, and does not check their values" do
    env = build(pass_env: %w[DATABASE_URL NOT_SET])
    assert_equal "postgres://secret", env["DATABASE_URL"]
    assert_equal "pass_env", env.sources["DATABASE_URL"]
    refute env.to_h.key?("NOT_SET")
    refute env.checked.key?("DATABASE_URL")
  end

  it "checks inside the server every variable a user source set, and RACK_ENV/RAILS_ENV always" do
    env = build(server_env: { "S" => "1" }, app_env: { "A" => "1" }, ruby_env: { "MALLOC_ARENA_MAX" => "2" },
                experiment_env: { "RUBY_GC_HEAP_INIT_SLOTS" => "10000" })
    assert_equal({ "RACK_ENV" => "production", "RAILS_ENV" => "production", "A" => "1", "MALLOC_ARENA_MAX" => "2",
                   "RUBY_GC_HEAP_INIT_SLOTS" => "10000" }, env.checked)
    assert_equal "RACK_ENV,RAILS_ENV,A,MALLOC_ARENA_MAX,RUBY_GC_HEAP_INIT_SLOTS", env["RACKBENCH_IDENTITY_ENV"]
  end

  # (An experiment file cannot name RACKBENCH_* variables at all: the
  # checker refuses them.)
  it "also checks the names other variants set, as unset here" do
    env = build(ruby_env: { "A" => "1" }, also_check: %w[A MALLOC_ARENA_MAX DATABASE_URL], pass_env: %w[DATABASE_URL])
    assert_equal({ "RACK_ENV" => "production", "RAILS_ENV" => "production", "A" => "1", "MALLOC_ARENA_MAX" => nil },
                 env.checked)
  end

  it "puts rackbench's own markers last, where nothing overrides them" do
    env = build(ruby_env: { "RACKBENCH_TRIAL_DIR" => "/elsewhere" }, trial_env: { "RACKBENCH_TRIAL_DIR" => "/t" })
    assert_equal "/t", env["RACKBENCH_TRIAL_DIR"]
    assert_equal "trial", env.sources["RACKBENCH_TRIAL_DIR"]
  end

  describe "threads and processes" do
    it "sets RAILS_MAX_THREADS, RAILS_MIN_THREADS and WEB_CONCURRENCY from the trial, and checks them" do
      env = build(threads: 4, processes: 2)
      assert_equal %w[4 4 2], env.to_h.values_at("RAILS_MAX_THREADS", "RAILS_MIN_THREADS", "WEB_CONCURRENCY")
      assert_equal "configuration", env.sources["RAILS_MAX_THREADS"]
      assert_equal "configuration", env.sources["WEB_CONCURRENCY"]
      assert_equal({ "RAILS_MAX_THREADS" => "4", "RAILS_MIN_THREADS" => "4", "WEB_CONCURRENCY" => "2" },
                   env.checked.slice("RAILS_MAX_THREADS", "RAILS_MIN_THREADS", "WEB_CONCURRENCY"))
      assert_includes env["RACKBENCH_IDENTITY_ENV"].split(","), "RAILS_MAX_THREADS"
    end

    it "follows 1 thread too" do
      env = build(threads: 1, processes: 1)
      assert_equal %w[1 1 1], env.to_h.values_at("RAILS_MAX_THREADS", "RAILS_MIN_THREADS", "WEB_CONCURRENCY")
    end

    it "sets none of them for a trial without threads and processes, nor takes them from the shell" do
      env = ServerEnv.new(parent: SHELL.merge("RAILS_MAX_THREADS" => "9", "WEB_CONCURRENCY" => "3"), bundle: bundle)
      %w[RAILS_MAX_THREADS RAILS_MIN_THREADS WEB_CONCURRENCY].each do |name|
        refute env.to_h.key?(name), name
        refute env.checked.key?(name), name
      end
    end

    it "lets the experiment, a ruby variant or the app win, and checks the value that won" do
      env = build(threads: 4, processes: 2, experiment_env: { "RAILS_MAX_THREADS" => "7" },
                  ruby_env: { "WEB_CONCURRENCY" => "5" }, app_env: { "RAILS_MIN_THREADS" => "1" })
      assert_equal %w[7 1 5], env.to_h.values_at("RAILS_MAX_THREADS", "RAILS_MIN_THREADS", "WEB_CONCURRENCY")
      assert_equal "experiment", env.sources["RAILS_MAX_THREADS"]
      assert_equal "7", env.checked["RAILS_MAX_THREADS"]
      assert_equal "5", env.checked["WEB_CONCURRENCY"]
      assert_equal "1", env.checked["RAILS_MIN_THREADS"]
    end

    it "lets a ruby variant unset one" do
      env = build(threads: 4, processes: 1, ruby_env: { "WEB_CONCURRENCY" => nil })
      refute env.to_h.key?("WEB_CONCURRENCY")
      assert env.checked.key?("WEB_CONCURRENCY")
      assert_nil env.checked["WEB_CONCURRENCY"]
    end
  end

  it "is frozen" do
    assert_predicate build, :frozen?
    assert_predicate build.checked, :frozen?
  end
end
