# frozen_string_literal: true

require "fileutils"
require "json"
require "tmpdir"
require "rackbench/rubies"

# Stand-in rubies for the discovery and resolution tests: shell scripts
# under test/fixtures/rubies that answer the probe with what a test wrote
# beside them, placed in a temporary home with its own PATH directory.
module FakeRubies
  FIXTURES = File.expand_path("../fixtures/rubies", __dir__)

  def setup
    @tmp = Dir.mktmpdir("rackbench-rubies")
    @home = File.join(@tmp, "home")
    @bin = File.join(@tmp, "bin")
    FileUtils.mkdir_p([@home, @bin])
  end

  def teardown
    FileUtils.rm_rf(@tmp)
  end

  # A fake ruby at path whose probe answers with fields: executable is what
  # it reports as RbConfig.ruby, exe what it reports as /proc/self/exe (both
  # default to path, as for an ordinary interpreter binary), description
  # "<engine> <version> (fake)"; extra fields (libruby, description) are
  # added as given.
  def fake_ruby(path, engine: "ruby", version: "3.3.0", executable: nil, exe: nil, jit: ["yjit"], warning: nil, **extra)
    install_fixture("fake_ruby", path)
    info = { "engine" => engine, "version" => version, "ruby_version" => engine == "ruby" ? version : "3.1.4",
             "abi_version" => "#{version[/\A\d+\.\d+/]}.0", "description" => "#{engine} #{version} (fake)",
             "platform" => "x86_64-linux", "executable" => executable || path, "exe" => exe || path,
             "jit" => jit }
    info.merge!(extra.transform_keys(&:to_s))
    File.write("#{path}.probe", "#{"#{warning}\n" if warning}RACKBENCH_PROBE #{JSON.generate(info)}\n")
    path
  end

  # A script at path that execs target, as a wrapper or a shim does; its
  # probe is therefore target's answer.
  def wrapper_ruby(path, target)
    install_fixture("wrapper_ruby", path)
    File.write("#{path}.target", target)
    path
  end

  def install_fixture(name, path)
    FileUtils.mkdir_p(File.dirname(path))
    FileUtils.cp(File.join(FIXTURES, name), path)
    File.chmod(0o755, path)
    path
  end

  def discover(env: {}, extra_paths: [], **options)
    Rackbench::Rubies.discover(env: { "PATH" => @bin }.merge(env), home: @home, extra_paths: extra_paths, **options)
  end

  def by_name(installs)
    installs.to_h { |i| [i.name, i] }
  end
end
