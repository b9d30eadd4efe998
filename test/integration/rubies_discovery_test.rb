# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "json"
require "rbconfig"
require "rackbench/rubies"
require "support/fake_rubies"

# Discovery runs fake rubies (shell scripts under test/fixtures/rubies that
# answer the probe, see test/support/fake_rubies.rb) in a temporary home;
# the real probe of the ruby running the tests is in
# test/integration/ruby_probe_test.rb. What is exec'd and how installs are
# told apart: test/unit/rubies_identity_test.rb.
module RubiesSpec
  describe "Rackbench::Rubies.discover" do
    include FakeRubies

    it "finds the PATH rubies and every version manager's installs, in order, with their source" do
      fake_ruby(File.join(@bin, "ruby"), version: "3.1.2")
      fake_ruby(File.join(@bin, "jruby"), engine: "jruby", version: "9.4.5.0", jit: ["jvm"])
      fake_ruby(File.join(@tmp, "rbenv-root/versions/3.3.0/bin/ruby"), version: "3.3.0")
      fake_ruby(File.join(@home, ".rubies/ruby-3.2.2/bin/ruby"), version: "3.2.2")
      fake_ruby(File.join(@home, ".asdf/installs/ruby/3.0.6/bin/ruby"), version: "3.0.6")
      fake_ruby(File.join(@home, ".local/share/mise/installs/ruby/2.7.8/bin/ruby"), version: "2.7.8")
      fake_ruby(File.join(@home, ".rvm/rubies/truffleruby-23.1.0/bin/truffleruby"), engine: "truffleruby",
                                                                                   version: "23.1.0", jit: ["graal"])
      explicit = fake_ruby(File.join(@tmp, "custom/bin/ruby"), version: "3.4.0")

      installs = discover(env: { "RBENV_ROOT" => File.join(@tmp, "rbenv-root") }, extra_paths: [File.join(@tmp, "custom")])

      assert_equal %w[ruby jruby ruby-3.3.0 ruby-3.2.2 ruby-3.0.6 ruby-2.7.8 truffleruby-23.1.0 ruby-3.4.0], installs.map(&:name)
      assert_equal %i[path path rbenv chruby asdf mise rvm explicit], installs.map(&:source)
      assert installs.all?(&:usable?)
      jruby = installs[1]
      assert_equal ["jruby", "9.4.5.0", "3.1.4", ["jvm"]], [jruby.engine, jruby.version, jruby.ruby_version, jruby.jit]
      assert_equal File.realpath(explicit), installs.last.path
      assert installs.all?(&:frozen?)
    end

    it "lists a ruby reachable through several paths once, under the name it was first found by" do
      real = fake_ruby(File.join(@home, ".rbenv/versions/3.3.0/bin/ruby"))
      File.symlink(real, File.join(@bin, "ruby"))
      # A shim is another file, but the probe runs in the ruby behind it.
      fake_ruby(File.join(@home, ".asdf/installs/ruby/3.3.0/bin/ruby"), executable: real, exe: real)

      installs = discover(extra_paths: [real])

      assert_equal [["ruby", :path, File.realpath(real)]], installs.map { |i| [i.name, i.source, i.path] }
    end

    it "makes names unique when two installs have the same engine and version" do
      fake_ruby(File.join(@home, ".rbenv/versions/3.3.0/bin/ruby"))
      fake_ruby(File.join(@home, ".asdf/installs/ruby/3.3.0/bin/ruby"))
      fake_ruby(File.join(@home, ".rvm/rubies/ruby-3.3.0/bin/ruby"))
      fake_ruby(File.join(@home, ".rvm/rubies/ruby-3.3.0-p1/bin/ruby"))

      assert_equal %w[ruby-3.3.0 ruby-3.3.0@asdf ruby-3.3.0@rvm ruby-3.3.0@rvm-2], discover.map(&:name)
    end

    it "reports a ruby that fails, hangs or is not a ruby with the reason instead of raising" do
      install_fixture("failing_ruby", File.join(@home, ".rbenv/versions/3.3.0/bin/ruby"))
      hanging = install_fixture("hanging_ruby", File.join(@home, ".rbenv/versions/3.4.0/bin/ruby"))
      install_fixture("garbage_ruby", File.join(@bin, "ruby"))
      fake_ruby(File.join(@bin, "jruby"), engine: "jruby", version: "9.4.5.0", warning: "warning: JAVA_HOME is odd")
      missing = File.join(@tmp, "nowhere/ruby")

      installs = by_name(discover(extra_paths: [missing, @home], probe_timeout_s: 0.5))

      assert_equal "printed no description: hello, I am not a ruby", installs["ruby"].error
      assert installs["jruby-9.4.5.0"].nil? && installs["jruby"].usable?, "warnings before the answer are ignored"
      assert_match(/\Aexited with status 127: ruby: error while loading shared libraries/, installs["3.3.0"].error)
      assert_equal "timed out after 0.5 s", installs["3.4.0"].error
      assert_equal "cannot run: No such file or directory - #{missing}", installs[missing].error
      assert_equal "is a directory without bin/ruby", installs[@home].error
      refute installs["3.3.0"].usable?
      assert_nil installs["3.3.0"].id

      pid = Integer(File.read("#{hanging}.pid"))
      assert_raises(Errno::ESRCH, "the hanging ruby was stopped and reaped") { Process.kill(0, pid) }
    end

    it "probes without the variables that rackbench itself may run under" do
      install_fixture("env_ruby", File.join(@bin, "ruby"))
      leaks = { "RUBYOPT" => "-rbundler/setup", "BUNDLE_GEMFILE" => "/work/Gemfile", "GEM_HOME" => "/gems",
                "BUNDLER_VERSION" => "2.3.15", "PATH" => "/bundle/bin:#{@bin}", "BUNDLER_ORIG_PATH" => @bin }

      description = discover(env: leaks).first.description

      assert_equal "RUBYOPT=unset BUNDLE_GEMFILE=unset GEM_HOME=unset BUNDLER_VERSION=unset PATH=#{@bin}", description
    end
  end

  describe "Rackbench::Rubies.resolve" do
    include FakeRubies

    def installs
      @installs ||= [
        install("ruby", "3.1.2", source: :path),
        install("jruby", "9.3.9.0", engine: "jruby", jit: ["jvm"], source: :path),
        install("ruby-3.3.0", "3.3.0", jit: %w[yjit rjit]),
        install("ruby-3.3.1", "3.3.1", jit: %w[yjit rjit]),
        install("ruby-3.0.6", "3.0.6", jit: ["mjit"]),
        Rackbench::Rubies::Install.new(name: "3.4.0", path: "/rubies/broken/bin/ruby", source: :rbenv,
                                       error: "exited with status 127")
      ]
    end

    def install(name, version, engine: "ruby", jit: ["yjit"], source: :rbenv)
      Rackbench::Rubies::Install.new(name: name, path: "/rubies/#{name}/bin/#{engine}", source: source, engine: engine,
                                     version: version, jit: jit, description: "#{engine} #{version} (fake)")
    end

    def resolve(spec, **options)
      Rackbench::Rubies.resolve(spec, installs: installs, **options)
    end

    it "finds a ruby by name, engine-version, version, or version prefix (newest wins)" do
      assert_equal "ruby", resolve("ruby").install.name
      assert_equal "jruby", resolve("jruby-9.3.9.0").install.name
      assert_equal "jruby", resolve("jruby-9.3").install.name
      assert_equal "ruby", resolve("3.1.2").install.name
      assert_equal "ruby-3.3.1", resolve("3.3").install.name
      assert_equal "ruby-3.3.1", resolve("ruby-3").install.name
      assert_equal "ruby-3.0.6", resolve({ "ruby" => "3.0.6" }).install.name
    end

    it "says which rubies exist when the requested one does not, in one line" do
      error = assert_raises(Rackbench::ConfigError) { resolve({ name: "old", ruby: "2.7" }) }

      assert_equal "ruby '2.7' not found; found: ruby, jruby, ruby-3.3.0, ruby-3.3.1, ruby-3.0.6", error.message
    end

    it "refuses a ruby that was found but does not run, with the reason" do
      error = assert_raises(Rackbench::SetupError) { resolve("3.4.0") }

      assert_equal "ruby '3.4.0' (/rubies/broken/bin/ruby) does not run: exited with status 127", error.message
    end

    it "builds a variant with options and environment under its own name" do
      variant = resolve({ name: "yjit+jemalloc", ruby: "ruby", options: ["--yjit"],
                          env: { "LD_PRELOAD" => "/usr/lib/libjemalloc.so.2", MALLOC_ARENA_MAX: 2 } })

      assert_equal "yjit+jemalloc", variant.name
      assert_equal ["/rubies/ruby/bin/ruby", "--yjit"], variant.command
      assert_equal({ "LD_PRELOAD" => "/usr/lib/libjemalloc.so.2", "MALLOC_ARENA_MAX" => "2" }, variant.env)
      assert_equal "ruby 3.1.2 (fake) with --yjit LD_PRELOAD=/usr/lib/libjemalloc.so.2 MALLOC_ARENA_MAX=2",
                   variant.description
      assert variant.frozen? && variant.options.frozen? && variant.env.frozen?
    end

    it "names an unnamed variant after its ruby, options and environment" do
      assert_equal "ruby", resolve("ruby").name
      assert_equal "ruby-3.3.0 --yjit MALLOC_ARENA_MAX=2",
                   resolve({ ruby: "ruby-3.3.0", options: ["--yjit"], env: { "MALLOC_ARENA_MAX" => "2" } }).name
      assert_equal resolve("ruby"), resolve({ "ruby" => "ruby", "options" => [], "env" => {} })
    end

    it "refuses a JIT option the ruby does not support, naming the option" do
      error = assert_raises(Rackbench::ConfigError) { resolve({ name: "j", ruby: "jruby", options: ["--yjit"] }) }
      assert_equal "ruby 'j': option --yjit needs YJIT, which jruby (/rubies/jruby/bin/jruby) does not support " \
                   "(JITs: jvm)", error.message

      assert_raises(Rackbench::ConfigError) { resolve({ ruby: "ruby-3.0.6", options: ["--yjit-exec-mem-size=64"] }) }
      assert_raises(Rackbench::ConfigError) { resolve({ ruby: "ruby", options: ["--rjit"] }) }
      assert_equal ["--rjit"], resolve({ ruby: "ruby-3.3.0", options: ["--rjit"] }).options
      assert_equal ["--mjit"], resolve({ ruby: "3.0.6", options: ["--mjit"] }).options
    end

    it "accepts ordinary interpreter options and refuses those that change what runs" do
      assert_equal ["-W0", "-rjemalloc", "--disable-did_you_mean"],
                   resolve({ ruby: "ruby", options: ["-W0", "-rjemalloc", "--disable-did_you_mean"] }).options
      assert_equal ["-J-Xmx1g", "-Xcompile.invokedynamic=true"],
                   resolve({ ruby: "jruby", options: ["-J-Xmx1g", "-Xcompile.invokedynamic=true"] }).options

      ["-e", "-we", "-S", "-Ctmp", "-Xtmp", "yjit", "--"].each do |option|
        error = assert_raises(Rackbench::ConfigError, option) { resolve({ ruby: "ruby", options: [option] }) }
        assert_match(/option #{Regexp.escape(option.inspect)} is not allowed/, error.message)
      end
      error = assert_raises(Rackbench::ConfigError) { resolve({ ruby: "ruby", options: ["-J-Xmx1g"] }) }
      assert_match(/-J-Xmx1g is a JRuby option/, error.message)
    end

    it "refuses malformed entries and environment names" do
      assert_raises(Rackbench::ConfigError) { resolve({ name: "x" }) }
      assert_raises(Rackbench::ConfigError) { resolve(42) }
      assert_raises(Rackbench::ConfigError) { resolve({ ruby: "ruby", options: "--yjit" }) }
      error = assert_raises(Rackbench::ConfigError) { resolve({ ruby: "ruby", env: { "BAD NAME" => "1" } }) }
      assert_match(/"BAD NAME" is invalid/, error.message)
    end

    it "finds an absolute path among the installs, or probes it when discovery missed it" do
      dir = Dir.mktmpdir
      path = fake_ruby(File.join(dir, "bin/ruby"), version: "3.2.0")
      link = File.join(dir, "ruby-link")
      File.symlink(path, link)

      probed = resolve(link, env: { "PATH" => "/usr/bin:/bin" })
      assert_equal ["ruby-3.2.0", :explicit, File.realpath(path)],
                   [probed.install.name, probed.install.source, probed.install.path]

      known = install("mine", "3.2.0").with(path: File.realpath(path))
      assert_same known, Rackbench::Rubies.resolve(path, installs: [known]).install

      error = assert_raises(Rackbench::ConfigError) { resolve(File.join(dir, "nope")) }
      assert_equal "ruby '#{File.join(dir, "nope")}' not found: no such file", error.message
    ensure
      FileUtils.rm_rf(dir) if dir
    end
  end

  describe "Rackbench::Rubies::Install" do
    it "is a frozen value that can be copied with changes" do
      install = Rackbench::Rubies::Install.new(name: "ruby", path: "/usr/bin/ruby", source: :path, engine: "ruby",
                                               version: "3.1.2", jit: ["yjit"])

      assert install.frozen? && install.jit.frozen?
      assert_equal "ruby-3.1.2", install.id
      copy = install.with(name: "other")
      assert_equal ["other", "ruby"], [copy.name, install.name]
      refute_equal install, copy
      assert_equal install, install.with(name: "ruby")
      assert_equal :path, install.to_h[:source]
    end

    it "carries what runs: the process image and libruby, in to_h and in its identity" do
      install = Rackbench::Rubies::Install.new(name: "w", path: "/opt/w/ruby", source: :explicit, engine: "ruby",
                                               version: "3.1.2", description: "ruby 3.1.2",
                                               exe: "/usr/bin/ruby3.1", libruby: "/usr/lib/libruby.so.3.1")

      assert_equal ["/usr/bin/ruby3.1", "/usr/lib/libruby.so.3.1"], install.to_h.values_at(:exe, :libruby)
      assert install.exe.frozen? && install.libruby.frozen?
      assert_equal ["/opt/w/ruby", "/usr/bin/ruby3.1", "/usr/lib/libruby.so.3.1", "ruby 3.1.2"], install.identity
      assert_equal install.identity, install.with(name: "other", source: :path).identity
      refute_equal install.identity, install.with(path: "/usr/bin/ruby3.1").identity
      refute_equal install.identity, install.with(libruby: nil).identity
      static = Rackbench::Rubies::Install.new(name: "s", path: "/opt/s/ruby", source: :explicit)
      assert_nil static.exe
      assert_nil static.libruby
    end
  end

  describe "Rackbench::Rubies::Child" do
    Child = Rackbench::Rubies::Child

    def process_gone?(pid)
      state = File.read("/proc/#{pid}/stat").split(") ").last.split.first
      state == "Z"
    rescue Errno::ENOENT, Errno::ESRCH
      true
    end

    it "captures the output of an argv without a shell" do
      result = Child.run(["/bin/echo", "a;b", "$HOME"], env: {}, timeout_s: 5)

      assert result.success?
      assert_equal "a;b $HOME\n", result.output
    end

    it "stops the whole process group at the deadline" do
      Dir.mktmpdir do |dir|
        pid_file = File.join(dir, "pid")
        script = "/bin/sleep 60 & echo $! > #{pid_file}; wait"
        result = Child.run(["/bin/sh", "-c", script], env: {}, timeout_s: 0.3)

        assert result.timed_out
        refute result.success?
        grandchild = Integer(File.read(pid_file))
        wait_until(message: "the backgrounded sleep to die") { process_gone?(grandchild) }
      end
    end

    it "does not wait forever for output held open by a process the command left behind" do
      Dir.mktmpdir do |dir|
        pid_file = File.join(dir, "pid")
        result = Child.run(["/bin/sh", "-c", "/bin/sleep 60 & echo $! > #{pid_file}; echo done"],
                           env: {}, timeout_s: 5, drain_grace_s: 0.2)

        assert result.success?
        assert_equal "done\n", result.output
        grandchild = Integer(File.read(pid_file))
        wait_until(message: "the leftover sleep to die") { process_gone?(grandchild) }
      end
    end
  end
end
