# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "json"
require "rackbench/rubies"
require "rackbench/bundle_env"

# Real installs through the RubyGems mirror into a temporary cache: a tiny
# app (gem "rack") plus a local path gem whose executable reports how it
# was started, run through BundleEnv#exec_prefix. Takes a few seconds for
# CRuby, then JRuby (about 30 s; bin/setup installs Debian's jruby).
module BundleEnvIntegrationSpec
  # What `bundle exec rake` leaves in the environment: none of it may reach
  # the benchmarked ruby.
  def self.leaky_parent(tmp)
    ENV.to_h.merge("RUBYOPT" => "-rbundler/setup", "BUNDLE_GEMFILE" => File.expand_path("../../Gemfile", __dir__),
                   "BUNDLER_VERSION" => "0.0.1", "GEM_HOME" => File.join(tmp, "nowhere"))
  end

  describe "Rackbench::BundleEnv (integration, network)" do
    def setup
      @tmp = Dir.mktmpdir("rackbench-bundle-int")
      @app = File.join(@tmp, "app")
      FileUtils.mkdir_p(@app)
      File.write(File.join(@app, "Gemfile"), "source \"https://rubygems.org\"\ngem \"rack\"\n")
      @probe_gem = write_probe_gem(File.join(@tmp, "rbprobe"))
    end

    def teardown
      FileUtils.rm_rf(@tmp)
    end

    # A path gem with an executable that prints how it runs.
    def write_probe_gem(dir)
      FileUtils.mkdir_p(File.join(dir, "exe"))
      File.write(File.join(dir, "rbprobe.gemspec"), <<~RUBY)
        Gem::Specification.new do |s|
          s.name = "rbprobe"
          s.version = "0.0.1"
          s.summary = "rackbench test probe"
          s.authors = ["rackbench"]
          s.files = ["exe/rbprobe"]
          s.bindir = "exe"
          s.executables = ["rbprobe"]
        end
      RUBY
      File.write(File.join(dir, "exe/rbprobe"), <<~RUBY)
        #!/usr/bin/env ruby
        require "json"
        require "rack"
        puts JSON.generate(
          "ruby" => File.realpath(RbConfig.ruby),
          "yjit" => defined?(RubyVM::YJIT) ? RubyVM::YJIT.enabled? : nil,
          "rack" => Gem.loaded_specs["rack"].version.to_s,
          "gemfile" => ENV["BUNDLE_GEMFILE"],
          "rubyopt" => ENV["RUBYOPT"],
          "gem_home" => ENV["GEM_HOME"],
          "args" => ARGV
        )
      RUBY
      dir
    end

    def installs
      @installs ||= Rackbench::Rubies.discover(home: @tmp)
    end

    def install_and_run(ruby_name, options:, timeout_s:)
      variant = Rackbench::Rubies.resolve({ ruby: ruby_name, options: options }, installs: installs)
      extra = ["gem \"rbprobe\", path: #{@probe_gem.inspect}"]
      env = Rackbench::BundleEnv.new(app_dir: @app, gemfile_extra: extra, install: variant.install,
                                     root: File.join(@tmp, "cache"), parent_env: BundleEnvIntegrationSpec.leaky_parent(@tmp))

      assert_equal :installed, env.ensure_installed!
      copy = Rackbench::BundleEnv.new(app_dir: @app, gemfile_extra: extra, install: variant.install,
                                      root: File.join(@tmp, "cache"), parent_env: BundleEnvIntegrationSpec.leaky_parent(@tmp))
      assert_equal :reused, copy.ensure_installed!

      [env, variant, probe_report(env, variant, timeout_s)]
    end

    def probe_report(env, variant, timeout_s)
      out, status = run_probe(env, variant, timeout_s)
      assert status.success?, "rbprobe failed: #{out}"
      JSON.parse(out.lines.last)
    end

    def run_probe(env, variant, timeout_s)
      reader, writer = IO.pipe
      pid = Process.spawn(env.env(BundleEnvIntegrationSpec.leaky_parent(@tmp)), *env.exec_prefix(variant.command),
                          "rbprobe", "a b",
                          out: writer, err: writer, chdir: @app, pgroup: true)
      writer.close
      waiter = Process.detach(pid)
      flunk "rbprobe did not finish within #{timeout_s} s" unless waiter.join(timeout_s)
      [reader.read, waiter.value]
    ensure
      Process.kill("KILL", -pid) if waiter&.alive?
      waiter&.join
      reader&.close
    end

    it "installs a real bundle for the ruby on PATH and runs its executables with the variant's options" do
      ruby = installs.find { |i| i.name == "ruby" }
      options = ruby.jit?("yjit") ? ["--yjit"] : []

      env, variant, report = install_and_run("ruby", options: options, timeout_s: 60)

      versions = env.gem_versions
      assert_match(/\A\d+\.\d+\.\d+/, versions["rack"])
      assert_equal "0.0.1", versions["rbprobe"]
      assert_equal versions["rack"], report["rack"]
      assert_equal variant.install.path, report["ruby"]
      unless options.empty?
        assert_equal true, report["yjit"], "--yjit reached the executable"
        # The same bundle, the plain variant: YJIT must be off there.
        plain = Rackbench::Rubies.resolve({ ruby: "ruby" }, installs: installs)
        assert_equal false, probe_report(env, plain, 60)["yjit"], "the plain variant runs without --yjit"
      end
      assert_equal env.gemfile_path, report["gemfile"]
      assert_equal env.gem_dir, report["gem_home"], "Bundler's own, not the leaked one"
      assert_match(%r{bundler/setup}, report["rubyopt"], "set for processes the server execs")
      assert_equal ["a b"], report["args"]
      assert Dir.exist?(File.join(env.gem_dir, "gems", "rack-#{versions["rack"]}"))
    end

    it "does the same for JRuby" do
      env, _variant, report = install_and_run("jruby", options: [], timeout_s: 120)

      assert_equal env.gem_versions["rack"], report["rack"]
      assert_equal env.gemfile_path, report["gemfile"]
      assert_match(%r{/jruby-\d+\.\d+\.0\z}, env.install_path)
    end
  end
end
