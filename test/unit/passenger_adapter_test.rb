# frozen_string_literal: true

require "test_helper"
require "json"
require "rackbench/servers"
require "rackbench/servers/passenger"
require "rackbench/servers/passenger/watchdog_command"

# The Passenger adapter without Passenger: what it refuses, the settings
# its command hands the boot script, and the watchdog command the boot
# script builds from them (test/integration/passenger_test.rb boots it).
describe Rackbench::Servers::Passenger do
  let(:adapter) { Rackbench::Servers.fetch("passenger") }

  before { @work = Dir.mktmpdir("rackbench-passenger") }
  after { FileUtils.remove_entry(@work) }

  def command(options: {}, processes: 2, environment: "production")
    adapter.command(app_dir: "/apps/hello", config_ru: "/apps/hello/config.ru", port: 4567, processes: processes,
                    threads: 1, work_dir: @work, options: options, environment: environment)
  end

  def settings(**kwargs)
    argv = command(**kwargs)
    JSON.parse(File.read(argv.last))
  end

  def reason(processes: 1, threads: 1, ruby_engine: "ruby", options: {})
    adapter.unsupported_reason(processes: processes, threads: threads, ruby_engine: ruby_engine, options: options)
  end

  it "is registered as passenger, a known server, with the passenger gem" do
    assert_includes Rackbench::Servers.names, "passenger"
    assert_includes Rackbench::Experiment::KNOWN_SERVERS, "passenger"
    assert_equal "passenger", adapter.server_gem
    # base64: Passenger's helper scripts require it, and Ruby 3.4 no longer has it as a default gem.
    assert_equal ['gem "passenger"', 'gem "base64"'], adapter.gem_lines("ruby")
  end

  it "forbids Passenger to compile or download its native support inside a trial (prepare_bundle built it)" do
    assert_equal({ "PASSENGER_COMPILE_NATIVE_SUPPORT_BINARY" => "0",
                   "PASSENGER_DOWNLOAD_NATIVE_SUPPORT_BINARY" => "0" }, adapter.env)
    assert_empty Rackbench::Servers.fetch("puma").env
  end

  describe "what it runs" do
    it "accepts any number of single-threaded processes on CRuby" do
      assert_nil reason(processes: 1)
      assert_nil reason(processes: 8)
    end

    it "refuses threads > 1 up front, naming Passenger Enterprise's concurrency model" do
      text = reason(processes: 2, threads: 2)
      assert_match(/single-threaded: threads 2 needs Passenger Enterprise's --concurrency-model thread/, text)
      refute_includes text, "\n"
    end

    it "refuses JRuby and non-positive shapes" do
      assert_match(/CRuby only/, reason(ruby_engine: "jruby"))
      assert_match(/processes must be a positive integer/, reason(processes: 0))
    end

    it "counts the boot process, the watchdog, the core and the preloader besides the app processes" do
      assert_equal 5, adapter.worker_processes(1)
      assert_equal 6, adapter.worker_processes(2)
    end

    it "is ready when P app processes said they were forked from the preloader" do
      pattern, count = adapter.ready_log(3)
      assert_equal 3, count
      assert_match pattern, "App 1234 output: [rackbench] passenger app process 1234 forked from the preloader"
      refute_match pattern, "App 1234 output: [passenger_native_support.so] successfully loaded."
    end
  end

  describe "#command" do
    it "runs the boot script through the launcher with the trial's settings file" do
      argv = command
      assert_equal [Rackbench::Servers::Passenger::BOOT_SCRIPT, File.join(@work, "passenger.json")], argv
      assert File.file?(Rackbench::Servers::Passenger::BOOT_SCRIPT)
      assert_equal({ "host" => "127.0.0.1", "port" => 4567, "processes" => 2, "app_root" => "/apps/hello",
                     "startup_file" => "config.ru", "environment" => "production", "spawn_method" => "smart",
                     "core_flags" => ["--disable-turbocaching"] }, JSON.parse(File.read(argv.last)))
    end

    it "passes the trial's environment" do
      assert_equal "staging", settings(environment: "staging")["environment"]
      assert_raises(Rackbench::ConfigError) { command(environment: "") }
    end

    it "always spawns smart (the preloader forks the app processes): direct is no option" do
      assert_equal "smart", settings["spawn_method"]
      error = assert_raises(Rackbench::ConfigError) { command(options: { "spawn_method" => "direct" }) }
      assert_match(/spawn_method/, error.message)
    end

    it "turns turbocaching off unless it is asked for" do
      assert_includes settings["core_flags"], "--disable-turbocaching"
      refute_includes settings(options: { "turbocaching" => true })["core_flags"], "--disable-turbocaching"
      assert_includes settings(options: { "turbocaching" => false })["core_flags"], "--disable-turbocaching"
    end

    it "passes max_request_queue_size and socket_backlog only when set" do
      flags = settings(options: { "max_request_queue_size" => 0, "socket_backlog" => 512 })["core_flags"]
      assert_equal ["--max-request-queue-size", "0", "--socket-backlog", "512", "--disable-turbocaching"], flags
      refute(settings["core_flags"].any? { |flag| flag.match?(/queue|backlog/) })
    end

    it "refuses an unknown option or a wrong value, naming it" do
      error = assert_raises(Rackbench::ConfigError) { command(options: { "threads" => 4 }) }
      assert_match(/passenger/, error.message)
      error = assert_raises(Rackbench::ConfigError) { command(options: { "turbocaching" => "yes" }) }
      assert_match(/turbocaching: must be true or false/, error.message)
    end
  end

  describe RackbenchPassenger::WatchdogCommand do
    PassengerWatchdogCommand = RackbenchPassenger::WatchdogCommand
    PASSENGER_TEST_LAUNCHER = "/gems/rackbench/lib/rackbench/bundle_env/launcher.rb"

    it "takes the interpreter command up to the launcher: the ruby, its options, Bundler's -I" do
      cmdline = ["/opt/ruby/bin/ruby", "--yjit", "-I", "/bundler/lib", PASSENGER_TEST_LAUNCHER, "/x/boot.rb",
                 "/w/passenger.json"]
      assert_equal ["/opt/ruby/bin/ruby", "--yjit", "-I", "/bundler/lib", PASSENGER_TEST_LAUNCHER],
                   PassengerWatchdogCommand.interpreter(cmdline, launcher: PASSENGER_TEST_LAUNCHER, exe: "/real/ruby")
    end

    it "replaces a bare program name with the real executable, and finds no launcher when there is none" do
      launcher = PASSENGER_TEST_LAUNCHER
      assert_equal ["/real/ruby", launcher],
                   PassengerWatchdogCommand.interpreter(["ruby", launcher, "boot.rb"], launcher: launcher, exe: "/real/ruby")
      assert_nil PassengerWatchdogCommand.interpreter(["ruby", "boot.rb"], launcher: launcher, exe: "/real/ruby")
    end

    it "writes an app ruby that execs the interpreter command with Passenger's arguments" do
      script = PassengerWatchdogCommand.app_ruby_script(["/opt/my ruby/bin/ruby", "--yjit", PASSENGER_TEST_LAUNCHER],
                                                        app_process: "/x/app_process.rb")
      assert script.start_with?("#!/bin/sh\n")
      assert_includes script,
                      "\nexec /opt/my\\ ruby/bin/ruby --yjit -r /x/app_process.rb #{PASSENGER_TEST_LAUNCHER} \"$@\"\n"
    end

    it "runs the builtin engine in the foreground on 127.0.0.1 with exactly P processes and nothing phoning home" do
      settings = { "host" => "127.0.0.1", "port" => 4567, "processes" => 3, "app_root" => "/apps/hello",
                   "startup_file" => "config.ru", "environment" => "production", "spawn_method" => "direct",
                   "core_flags" => ["--disable-turbocaching"] }
      argv = PassengerWatchdogCommand.argv(settings: settings, agent: "/p/PassengerAgent", passenger_root: "/p",
                                  app_ruby: "/w/passenger-ruby", instances_dir: "/w/i", report_file: "/w/r.json",
                                  user: "bench", group: nil)
      assert_equal ["/p/PassengerAgent", "watchdog", "--passenger-root", "/p"], argv.first(4)
      refute_includes argv, "--daemonize"
      refute_includes argv, "--default-group"
      core = argv[argv.index("--BC") + 1...argv.index("--EC")]
      assert_equal "tcp://127.0.0.1:4567", core[core.index("--listen") + 1]
      assert_equal "3", core[core.index("--max-pool-size") + 1]
      assert_equal "3", core[core.index("--min-instances") + 1]
      assert_equal "direct", core[core.index("--spawn-method") + 1]
      assert_equal "production", core[core.index("--environment") + 1]
      assert_equal "/w/passenger-ruby", core[core.index("--ruby") + 1]
      %w[--disable-security-update-check --disable-anonymous-telemetry --disable-turbocaching].each do |flag|
        assert_includes core, flag
      end
      assert_equal "/apps/hello", core.last
      assert_includes argv, 'prestart_urls=["http://127.0.0.1:4567/"]'
      with_group = PassengerWatchdogCommand.argv(settings: settings, agent: "a", passenger_root: "/p", app_ruby: "r",
                                        instances_dir: "i", report_file: "f", user: "bench", group: "staff")
      assert_equal "staff", with_group[with_group.index("--default-group") + 1]
    end
  end
end
