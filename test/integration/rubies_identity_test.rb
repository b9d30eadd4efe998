# frozen_string_literal: true

require "test_helper"
require "rbconfig"
require "rackbench/rubies"
require "support/fake_rubies"

# What rackbench execs for a ruby and how installs are told apart (see
# doc/rubies.md): a ruby named by path runs as itself, one found through
# PATH or a version manager stands for the interpreter behind it, and
# installs are deduplicated by what runs, never by the RbConfig.ruby they
# report. Fake rubies answer the probe as the real ones did on Debian 12:
# ruby3.1 3.1.7 unpacked under a prefix reports RbConfig.ruby
# /usr/bin/ruby3.1, which is the system's 3.1.2.
module RubiesIdentitySpec
  LIBRUBY_312 = "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2"

  module SystemRuby
    include FakeRubies

    # The system ruby, found on PATH as "ruby".
    def system_ruby
      @system_ruby ||= fake_ruby(File.join(@bin, "ruby"), version: "3.1.2", libruby: LIBRUBY_312)
    end

    # A 3.1.7 binary under a prefix with its own libruby, which still
    # reports the system's path as RbConfig.ruby.
    def relocated_ruby(dir = File.join(@tmp, "r317/prefix/usr"), command: "ruby3.1")
      fake_ruby(File.join(dir, "bin", command), version: "3.1.7", executable: system_ruby,
                                                libruby: File.join(dir, "lib/libruby-3.1.so.3.1.7"))
    end

    # A copy of the system binary: same description and RbConfig.ruby,
    # another file.
    def copied_ruby(path)
      fake_ruby(path, version: "3.1.2", executable: system_ruby, libruby: LIBRUBY_312)
    end

    def resolve(reference, installs:)
      Rackbench::Rubies.resolve({ ruby: reference }, installs: installs, env: { "PATH" => @bin })
    end
  end

  describe "a ruby named by path" do
    include SystemRuby

    it "runs a relocated build as itself, never the install that reports the same RbConfig.ruby" do
      relocated = relocated_ruby
      installs = discover
      assert_equal [["ruby", system_ruby]], installs.map { |i| [i.name, i.path] }

      variant = resolve(relocated, installs: installs)

      assert_equal [relocated, relocated, "ruby 3.1.7 (fake)"],
                   [variant.install.path, variant.install.exe, variant.install.description]
      assert_equal File.join(@tmp, "r317/prefix/usr/lib/libruby-3.1.so.3.1.7"), variant.install.libruby
      assert_equal [relocated], variant.command
      assert_equal ["ruby-3.1.7", :explicit], [variant.install.name, variant.install.source]
      # The other side: the system ruby by name or by its path is still itself.
      assert_equal system_ruby, resolve("ruby", installs: installs).install.path
      assert_same installs.first, resolve(system_ruby, installs: installs).install
    end

    it "lists a relocated build given explicitly as its own install, and resolves its path to that install" do
      relocated = relocated_ruby
      installs = discover(extra_paths: [relocated])

      assert_equal [["ruby", system_ruby, "3.1.2"], ["ruby-3.1.7", relocated, "3.1.7"]],
                   installs.map { |i| [i.name, i.path, i.version] }
      assert_same installs.last, resolve(relocated, installs: installs).install
    end

    it "runs the file a symlink points to" do
      relocated = relocated_ruby
      link = File.join(@tmp, "ruby-link")
      File.symlink(relocated, link)

      install = resolve(link, installs: discover).install

      assert_equal [relocated, "3.1.7"], [install.path, install.version]
    end

    it "keeps a copy of the system ruby apart from it, under a name no other install has" do
      copy = copied_ruby(File.join(@tmp, "copy/ruby3.1"))
      other = copied_ruby(File.join(@tmp, "copy2/ruby3.1"))
      rbenv = copied_ruby(File.join(@home, ".rbenv/versions/3.1.2/bin/ruby"))

      installs = discover(extra_paths: [copy, other])

      assert_equal [["ruby", system_ruby], ["ruby-3.1.2", rbenv], ["ruby-3.1.2@explicit", copy],
                    ["ruby-3.1.2@explicit-2", other]], installs.map { |i| [i.name, i.path] }
      assert_equal 1, installs.map(&:description).uniq.size, "one version and description, four binaries"
      probed = resolve(copy, installs: discover).install
      assert_equal ["ruby-3.1.2@explicit", copy, copy], [probed.name, probed.path, probed.exe]
    end

    it "runs a wrapper script as itself, not the ruby it execs" do
      wrapper = wrapper_ruby(File.join(@tmp, "wrap/ruby"), system_ruby)
      installs = discover

      variant = resolve(wrapper, installs: installs)

      assert_equal [wrapper, system_ruby, "ruby 3.1.2 (fake)"],
                   [variant.install.path, variant.install.exe, variant.install.description]
      assert_equal [wrapper, "--yjit"], Rackbench::Rubies.resolve({ ruby: wrapper, options: ["--yjit"] },
                                                                   installs: installs).command
      listed = discover(extra_paths: [wrapper])
      assert_equal [["ruby", system_ruby, system_ruby], ["ruby-3.1.2", wrapper, system_ruby]],
                   listed.map { |i| [i.name, i.path, i.exe] }
    end

    it "runs a version manager's shim named by path as the shim itself" do
      real = fake_ruby(File.join(@home, ".rbenv/versions/3.3.0/bin/ruby"))
      shim = wrapper_ruby(File.join(@home, ".rbenv/shims/ruby"), real)

      install = resolve(shim, installs: discover).install

      assert_equal [shim, real], [install.path, install.exe]
    end
  end

  describe "a ruby found through PATH or a version manager" do
    include SystemRuby

    it "stands for the interpreter behind a shim, listed once under the PATH name" do
      real = fake_ruby(File.join(@home, ".rbenv/versions/3.3.0/bin/ruby"))
      wrapper_ruby(File.join(@bin, "ruby"), real)

      installs = discover

      assert_equal [["ruby", :path, real, real]], installs.map { |i| [i.name, i.source, i.path, i.exe] }
      assert_equal [real], resolve("ruby", installs: installs).command
    end

    it "stands for the interpreter behind a manager's shim that is not a script" do
      real = fake_ruby(File.join(@home, ".rbenv/versions/3.3.0/bin/ruby"))
      # mise's shims are symlinks to the mise binary; the probe still runs in the ruby it picks.
      fake_ruby(File.join(@tmp, "mise-bin/ruby"), exe: real, executable: "/nonexistent/ruby")

      installs = discover(env: { "PATH" => File.join(@tmp, "mise-bin") })

      assert_equal [["ruby", real]], installs.map { |i| [i.name, i.path] }
    end

    it "keeps two binaries that report one RbConfig.ruby as two installs" do
      system_ruby
      # An rbenv install that is a copy of the system ruby, and an asdf one that is the relocated 3.1.7.
      copy = copied_ruby(File.join(@home, ".rbenv/versions/3.1.2/bin/ruby"))
      relocated = relocated_ruby(File.join(@home, ".asdf/installs/ruby/3.1.7"), command: "ruby")

      installs = discover

      assert_equal [["ruby", system_ruby, system_ruby], ["ruby-3.1.2", copy, copy],
                    ["ruby-3.1.7", relocated, relocated]], installs.map { |i| [i.name, i.path, i.exe] }
    end

    it "runs JRuby through its launcher, which its process image (the JVM) is not" do
      launcher = install_fixture("fake_ruby", File.join(@tmp, "jruby/bin/jruby"))
      java = install_fixture("fake_ruby", File.join(@tmp, "jvm/bin/java"))
      fake_ruby(File.join(@bin, "jruby"), engine: "jruby", version: "9.3.9.0", jit: ["jvm"], executable: launcher,
                                          exe: java, libruby: nil)

      jruby = discover.first

      assert_equal [launcher, java, nil], [jruby.path, jruby.exe, jruby.libruby]
    end

    it "falls back to RbConfig.ruby for what runs where the probe cannot read /proc" do
      real = fake_ruby(File.join(@home, ".rbenv/versions/3.3.0/bin/ruby"))
      shim = File.join(@bin, "ruby")
      fake_ruby(shim, executable: real)
      File.write("#{shim}.probe", File.read("#{shim}.probe").sub(/"exe":"[^"]*",/, ""))

      install = discover.first

      assert_equal [real, real], [install.path, install.exe]
    end
  end

  describe "lib/rackbench/rubies/probe_script.rb" do
    SCRIPT = Rackbench::Rubies::Prober::SCRIPT
    # Required rather than run: defines RackbenchProbe and prints nothing.
    require SCRIPT

    def maps(*files)
      files.map.with_index do |file, i|
        "7f00000#{i}000-7f00000#{i + 1}000 r-xp 00000000 fe:00 #{100 + i}   #{file}\n"
      end.join
    end

    it "finds the libruby a shared build maps, and nothing for a static build or a JVM" do
      Dir.mktmpdir do |dir|
        lib = File.join(dir, "lib dir/libruby-3.1.so.3.1.7")
        FileUtils.mkdir_p(File.dirname(lib))
        File.write(lib, "")
        File.symlink(lib, File.join(dir, "libruby-3.1.so.3.1"))

        assert_equal lib, RackbenchProbe.libruby(maps("/usr/bin/ruby3.1", "/lib/libc.so.6",
                                                      File.join(dir, "libruby-3.1.so.3.1")))
        assert_equal "/gone/libruby.so.3.3.0", RackbenchProbe.libruby(maps("/gone/libruby.so.3.3.0 (deleted)"))
      end
      assert_nil RackbenchProbe.libruby(maps("/opt/ruby-static/bin/ruby", "/lib/libc.so.6", "[heap]"))
      assert_nil RackbenchProbe.libruby(maps("/usr/lib/jvm/java-17/bin/java", "/usr/lib/jvm/java-17/lib/libjvm.so"))
      assert_nil RackbenchProbe.libruby(maps("/opt/truffleruby/lib/libtruffleruby.so", "/opt/libruby-static.a"))
    end

    it "reports this process's image as exe" do
      assert_equal File.realpath("/proc/self/exe"), RackbenchProbe.exe
    end
  end
end
