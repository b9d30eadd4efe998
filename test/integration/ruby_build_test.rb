# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "json"
require "open3"
require "rbconfig"
require "support/test_rubies"

# Rubies built from source through an experiment, for real: Ruby 3.4.5 from
# the tarball Debian's ruby3.4 source package carries, stock and with a
# patch that adds a fixed cost to rb_hash_aset. The builds themselves were
# made by `rake test:rubies` (the same Rubies::Build an experiment runs,
# test/support/test_rubies.rb), so here each experiment finds its recipes
# in the cache; what fails fails before any build step that takes minutes.
describe "rubies built from source (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-build-it") }
  let(:tarball) { TestRubies.tarball("3.4") }

  after { FileUtils.rm_rf(dir) }

  def experiment(name, rubies, load: "{ connections: 2, duration: 0.3s, warmup: 0.2s, timeout: 5s }")
    file = File.join(dir, "#{name}.yml")
    File.write(file, <<~YAML)
      name: #{name}
      rubies:
      #{rubies.map { |r| "  - #{r}" }.join("\n")}
      servers: [puma]
      apps: [rack-hello]
      processes: 2
      load: #{load}
    YAML
    file
  end

  def run_experiment(file, results, env: {})
    rackbench("run", file, "--results", results, env: env)
  end

  def stored_trials(results)
    return [] unless File.exist?(File.join(results, "results.db"))

    Rackbench::Store.open(results, &:trials)
  end

  it "runs the stock and the patched 3.4.5 as the builds they are, from the cache, each recipe in What ran" do
    stock_key = TestRubies.install("3.4").recipe["key"]
    patched_key = TestRubies.patched.recipe["key"]
    logs_before = Dir[File.join(Rackbench::Rubies::Build::Cache.new.log_dir(stock_key), "*")].to_h { |f| [f, File.mtime(f)] }
    file = experiment("built", ["{ name: stock, build: { source: #{tarball} } }",
                                "{ name: stock-yjit, ruby: stock, options: [--yjit] }",
                                "{ name: slow, build: { source: #{tarball}, patches: [#{TestRubies::SLOW_PATCH}] } }"])
    results = File.join(dir, "results")

    out, err, status = run_experiment(file, results)

    assert status.success?, "run failed: #{err}\n#{out}"
    refute_match(/Building ruby/, out, "both builds come from the cache")
    assert_match(/Ruby 'stock': the build #{stock_key} of 3.4.5 from the cache/, out)
    assert_match(/Ruby 'slow': the build #{patched_key} of 3.4.5 from the cache/, out)
    logs_after = Dir[File.join(Rackbench::Rubies::Build::Cache.new.log_dir(stock_key), "*")].to_h { |f| [f, File.mtime(f)] }
    assert_equal logs_before, logs_after, "no build step ran again"

    trials = stored_trials(results).to_h { |t| [t.ruby, t] }
    { "stock" => [stock_key, nil], "stock-yjit" => [stock_key, "yjit"], "slow" => [patched_key, nil] }.each do |label, (key, jit)|
      trial = trials.fetch(label)
      assert_equal "ok", trial.status, "#{label}: #{trial.reason}"
      identity = trial.identity
      assert_equal key, identity["build"], "#{label}: the build its main process runs"
      assert_equal key, identity.dig("expected", "recipe", "key")
      assert_equal 3, identity["processes"].size, "#{label}: master and 2 workers"
      assert_equal [jit], identity["processes"].map { |p| p["jit"] }.uniq, label
      assert_match(/\Aruby 3\.4\.5 /, identity["description"])
    end
    refute_equal stock_key, patched_key
    assert_equal trials["stock"].identity["description"], trials["slow"].identity["description"],
                 "the case under test: a patched build has the stock build's RUBY_DESCRIPTION"
    patches = trials["slow"].identity.dig("expected", "recipe", "patches")
    assert_equal ["ruby-3.4-slow-hash-aset.patch"], patches.map { |p| p["name"] }
    assert_equal Digest::SHA256.file(TestRubies::SLOW_PATCH).hexdigest, patches.first["sha256"]
    assert_equal({ "kind" => "tarball", "sha256" => TestRubies::SOURCES["3.4"][:sha256] },
                 trials["stock"].identity.dig("expected", "recipe", "source").slice("kind", "sha256"))
    assert_match(/slow: ruby 3\.4\.5 \(built from ruby3\.4_3\.4\.5\.orig\.tar\.xz \(sha256 141fb3b0192b\) \+ ruby-3\.4-slow-hash-aset\.patch \(sha256 \h{12}\), configure --enable-shared --disable-install-doc, build #{patched_key}\)/,
                 out.gsub(/\n +/, " ")) # What ran's lines, unwrapped from the pipe's 100 columns
  end

  it "stops before any trial, in one line, on a patch that does not apply, a source that is not Ruby, a missing library" do
    not_ruby = File.join(dir, "not-ruby-1.0")
    FileUtils.mkdir_p(not_ruby)
    File.write(File.join(not_ruby, "README"), "not ruby\n")
    not_ruby_tarball = File.join(dir, "not-ruby-1.0.tar.gz")
    system("tar", "-czf", not_ruby_tarball, "-C", dir, "not-ruby-1.0", exception: true)
    hidden = File.join(dir, "hide")
    FileUtils.mkdir_p(hidden)
    File.write(File.join(hidden, "yaml.h"), "#error hidden by the test\n")
    patch = File.expand_path("../fixtures/patches/not-applying.patch", __dir__)

    cases = {
      "{ name: p, build: { source: #{tarball}, patches: [#{patch}] } }" =>
        /\Arackbench: ruby 'p' build: patch not-applying\.patch does not apply to array\.c \(Hunk #1 FAILED at 1\) \(log: \S+\/02-patch\.log\)\n\z/,
      "{ name: n, build: { source: #{not_ruby_tarball} } }" =>
        /\Arackbench: ruby 'n' build: source #{Regexp.escape(not_ruby_tarball)} is not a Ruby source tree .*\n\z/,
      "{ name: y, build: { source: #{tarball}, env: { CPPFLAGS: -I#{hidden} } } }" =>
        /\Arackbench: ruby 'y' build: yaml\.h not found \(psych .* needs it\): install the Debian package libyaml-dev \(apt-get install libyaml-dev\)\n\z/
    }
    cases.each_with_index do |(ruby, message), i|
      results = File.join(dir, "results-#{i}")
      out, err, status = run_experiment(experiment("broken-#{i}", ["ruby", ruby]), results)

      assert_equal 1, status.exitstatus, "#{ruby}: #{err}\n#{out}"
      assert_match message, err
      assert_empty stored_trials(results), "no trial ran or was stored"
      refute_match(/\[\d+\/\d+\] ruby=/, out, "no trial started")
    end
  end

  it "prunes an unused build and environment, never those a running experiment holds" do
    cache = File.join(dir, "cache")
    real = Rackbench::Rubies::Build::Cache.new
    key = TestRubies.install("3.4").recipe["key"]
    FileUtils.mkdir_p([File.join(cache, "rubies"), File.join(cache, "bundles", "gems")])
    # The stock build and its gems, linked into a cache of the test's own
    # (the build runs from its own prefix still; its gems install at once).
    system("cp", "-al", real.dir(key), File.join(cache, "rubies", key), exception: true)
    FileUtils.rm_f(File.join(cache, "rubies", key, "users")) # a hard link: the real cache's record stays its own
    real_gems = File.join(Rackbench::BundleEnv.default_root, "gems", "ruby-3.4.0")
    system("cp", "-al", real_gems, File.join(cache, "bundles", "gems", "ruby-3.4.0"), exception: true) if File.directory?(real_gems)
    unused = File.join(cache, "rubies", "0123456789abcdef")
    FileUtils.mkdir_p(File.join(unused, "prefix", "bin"))
    FileUtils.cp(File.join(real.prefix(key), "bin", "ruby"), File.join(unused, "prefix", "bin", "ruby"))
    File.chmod(0o755, File.join(unused, "prefix", "bin", "ruby"))
    File.write(File.join(unused, "recipe.json"), JSON.generate("key" => "0123456789abcdef", "name" => "unused", "version" => "3.4.5"))
    old_env = File.join(cache, "bundles", "old-app-0000000000000000")
    FileUtils.mkdir_p(old_env)
    File.write(File.join(old_env, "rackbench-env.json"),
               JSON.generate("app_dir" => "/gone/old-app", "install_path" => File.join(cache, "bundles", "gems", "ruby-3.4.0"),
                             "gemfile_extra" => ['gem "puma"']))
    File.write(File.join(old_env, "users"), "#{File.join(dir, "gone-results")}\n")

    env = { "RACKBENCH_CACHE" => cache }
    file = experiment("held", ["{ name: held, build: { source: #{tarball} } }"],
                      load: "{ connections: 2, duration: 60s, warmup: 0.2s, timeout: 5s }")
    results = File.join(dir, "held-results")
    log = File.join(dir, "held.log")
    runner = spawn_rackbench("run", file, "--results", results, env: env, in: File::NULL, %i[out err] => log,
                                                                pgroup: false)
    begin
      wait_until(timeout_s: 600, interval_s: 0.2, message: "the held experiment's trial to start") do
        File.read(log).include?("1/1 ruby=held")
      end

      out, err, status = rackbench("cache", "prune", "--unused", env: env)

      assert status.success?, err
      assert_match(/^removed build ruby 'unused' 3\.4\.5 0123456789abcdef .*: no stored experiment uses it$/, out)
      assert_match(%r{^removed environment old-app \+ puma .*: no stored experiment uses it$}, out)
      # A build keeps the name it was first built under; its key is what it is.
      assert_match(/^kept build ruby '[^']+' 3\.4\.5 #{key} .*: in use by a running process$/, out)
      assert_match(/^kept environment rack-hello \+ puma .*: in use by a running process$/, out)
      refute File.exist?(unused)
      refute File.exist?(old_env)
      assert File.executable?(File.join(cache, "rubies", key, "prefix", "bin", "ruby")), "the held build stays"
    ensure
      Process.kill(:INT, runner)
      Process.wait(runner)
    end
    assert_includes File.read(log), "rackbench: interrupted"
    listing, = rackbench("cache", "--json", env: env)
    held = JSON.parse(listing).find { |item| item["kind"] == "build" }
    assert_equal [results], held["users"], "the run recorded its results directory with the build it used"
    refute held["in_use"], "nothing holds it once the run has stopped"
  end
end
