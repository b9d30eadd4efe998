# frozen_string_literal: true

require "test_helper"
require "rbconfig"
require "rackbench/rubies"
require "support/fake_rubies"

# The probe for real: the ruby running the tests describes itself through
# lib/rackbench/rubies/probe_script.rb, in a process of its own.
describe "the real ruby's probe" do
  include FakeRubies

  # The libruby this test process maps, read independently of the probe.
  def own_libruby
    mapped = File.readlines("/proc/self/maps").map { |line| line.split(" ", 6)[5].to_s.strip }
    found = mapped.find { |file| File.basename(file).match?(/\Alibruby.*\.so/) }
    found && File.realpath(found)
  end

  it "describes the real ruby on PATH, even when leaks from bundle exec would break it" do
    File.symlink(RbConfig.ruby, File.join(@bin, "ruby"))
    # With these leaked, that ruby would try to load a Gemfile that does not exist and fail.
    leaks = { "RUBYOPT" => "-rbundler/setup", "BUNDLE_GEMFILE" => File.join(@tmp, "missing/Gemfile") }

    ruby = discover(env: leaks).first

    assert ruby.usable?, ruby.error
    assert_equal ["ruby", :path, File.realpath(RbConfig.ruby)], [ruby.name, ruby.source, ruby.path]
    # The same binary as this process, so the same process image and libruby.
    assert_equal File.realpath("/proc/self/exe"), ruby.exe
    assert_equal own_libruby, ruby.libruby
    assert_equal [RUBY_ENGINE, RUBY_ENGINE_VERSION, RUBY_VERSION, RbConfig::CONFIG["ruby_version"]],
                 [ruby.engine, ruby.version, ruby.ruby_version, ruby.abi_version]
    assert_equal RUBY_PLATFORM, ruby.platform
    assert_match(/\A#{RUBY_ENGINE} #{Regexp.escape(RUBY_VERSION)}/, ruby.description)
    yjit = system(RbConfig.ruby, "--yjit", "-e", "exit(RubyVM::YJIT.enabled? ? 0 : 1)", err: File::NULL)
    assert_equal yjit, ruby.jit?("yjit")
    assert File.file?(ruby.bundler_bin), "bundler script #{ruby.bundler_bin.inspect}"
  end

  describe "lib/rackbench/rubies/probe_script.rb" do
    SCRIPT = Rackbench::Rubies::Prober::SCRIPT

    it "prints its answer when run as the program, and nothing when loaded" do
      run = Rackbench::Rubies::Child.run([RbConfig.ruby, SCRIPT], env: { "PATH" => "/usr/bin:/bin" }, timeout_s: 30)
      loaded = Rackbench::Rubies::Child.run([RbConfig.ruby, "-e", "load ARGV[0]; p RackbenchProbe.exe", SCRIPT],
                                            env: { "PATH" => "/usr/bin:/bin" }, timeout_s: 30)

      assert_match(/\ARACKBENCH_PROBE \{.*"exe":"#{Regexp.escape(File.realpath(RbConfig.ruby))}"/, run.output)
      assert_equal "#{File.realpath(RbConfig.ruby).inspect}\n", loaded.output
    end
  end
end
