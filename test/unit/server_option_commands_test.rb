# frozen_string_literal: true

require "test_helper"
require "rackbench/servers"

# Every option of every adapter reaches the generated config file or the
# command line with its value, and is absent (or its opposite) when not
# set; booleans both ways. test/integration/server_options_test.rb shows
# that the real servers act on them.
describe "server options in commands" do
  # Evaluates a generated config file (Puma, Unicorn, Pitchfork DSL) and
  # records every call with its arguments, so the tests see the values as
  # the server will receive them (true, not "true"; [50, 100], not a string).
  class ConfigRecorder < BasicObject
    attr_reader :calls

    def initialize(path)
      @calls = []
      instance_eval(::File.read(path), path)
    end

    def method_missing(name, *args, **keywords)
      @calls << [name, *args, *(keywords.empty? ? [] : [keywords])]
    end

    def respond_to_missing?(*)
      true
    end
  end

  before { @work = Dir.mktmpdir("rackbench-server-options") }
  after { FileUtils.remove_entry(@work) }

  def adapter(name) = Rackbench::Servers.fetch(name)

  # The adapters rackbench ships (other tests register fakes of their own).
  def shipped
    Dir[File.expand_path("../../lib/rackbench/servers/*.rb", __dir__)].map { |path| adapter(File.basename(path, ".rb")) }
  end

  def command(name, options = {}, processes: 2, threads: 1, environment: "production")
    adapter(name).command(app_dir: "/apps/hello", config_ru: "/apps/hello/config.ru", port: 4567,
                          processes: processes, threads: threads, work_dir: @work, options: options,
                          environment: environment)
  end

  # The calls of the config file that +name+ generated for +options+.
  def config_calls(name, options, file)
    command(name, options)
    ConfigRecorder.new(File.join(@work, file)).calls
  end

  def calls_named(calls, method)
    calls.select { |call| call.first == method }
  end

  describe "puma" do
    def puma_calls(options) = config_calls("puma", options, "puma.rb")

    it "loads only its generated config file, which holds no option lines when none is set" do
      argv = command("puma")
      config = File.join(@work, "puma.rb")
      assert_equal ["--config", config], argv[1, 2]
      refute_includes argv, "-"
      assert_empty ConfigRecorder.new(config).calls
      assert_includes argv, "tcp://127.0.0.1:4567"
    end

    it "preloads or not, both ways, and leaves Puma's default when absent" do
      assert_equal [[:preload_app!, true]], calls_named(puma_calls("preload" => true), :preload_app!)
      assert_equal [[:preload_app!, false]], calls_named(puma_calls("preload" => false), :preload_app!)
      assert_empty calls_named(puma_calls({}), :preload_app!)
    end

    it "forks workers from worker 0 with Puma's default, a request count, or not at all" do
      assert_equal [[:fork_worker]], calls_named(puma_calls("fork_worker" => true), :fork_worker)
      assert_equal [[:fork_worker, 0]], calls_named(puma_calls("fork_worker" => 0), :fork_worker)
      assert_equal [[:fork_worker, 500]], calls_named(puma_calls("fork_worker" => 500), :fork_worker)
      assert_empty calls_named(puma_calls("fork_worker" => false), :fork_worker)
      assert_empty calls_named(puma_calls({}), :fork_worker)
    end

    it "writes every other option as its DSL line with its value" do
      calls = puma_calls("queue_requests" => false, "wait_for_less_busy_worker" => 0, "max_keep_alive" => 25,
                         "enable_keep_alives" => false, "persistent_timeout" => 7)
      assert_equal [[:queue_requests, false], [:wait_for_less_busy_worker, 0], [:max_keep_alive, 25],
                    [:enable_keep_alives, false], [:persistent_timeout, 7]], calls
      calls = puma_calls("queue_requests" => true, "enable_keep_alives" => true, "wait_for_less_busy_worker" => 0.01)
      assert_equal [[:queue_requests, true], [:enable_keep_alives, true], [:wait_for_less_busy_worker, 0.01]],
                   calls.sort_by { |call| %i[queue_requests enable_keep_alives wait_for_less_busy_worker].index(call[0]) }
    end

    it "sets the listen backlog in the bind address only when asked" do
      argv = command("puma", { "backlog" => 77 })
      assert_includes argv, "tcp://127.0.0.1:4567?backlog=77"
      assert_empty ConfigRecorder.new(File.join(@work, "puma.rb")).calls
      refute(command("puma").any? { |arg| arg.include?("backlog") })
    end

    it "runs in the trial's environment" do
      assert_includes command("puma", environment: "staging").each_cons(2).to_a, ["--environment", "staging"]
      assert_includes command("puma").each_cons(2).to_a, ["--environment", "production"]
    end

    it "refuses cluster-only options in single mode, and allows them with workers" do
      %w[preload fork_worker wait_for_less_busy_worker].each do |key|
        reason = adapter("puma").unsupported_reason(processes: 1, threads: 4, ruby_engine: "ruby", options: { key => 0 })
        assert_match(/single mode with processes 1: #{key} applies to cluster mode only/, reason)
        assert_nil adapter("puma").unsupported_reason(processes: 2, threads: 4, ruby_engine: "ruby", options: { key => 0 })
      end
      assert_nil adapter("puma").unsupported_reason(processes: 1, threads: 4, ruby_engine: "ruby",
                                                    options: { "queue_requests" => false, "backlog" => 5 })
    end
  end

  describe "unicorn" do
    def unicorn_calls(options) = config_calls("unicorn", options, "unicorn.conf.rb")

    it "keeps the workers and the listen address, and adds the backlog to the listen line only when asked" do
      assert_equal [[:worker_processes, 2], [:listen, "127.0.0.1:4567"]], unicorn_calls({})
      assert_equal [[:worker_processes, 2], [:listen, "127.0.0.1:4567", { backlog: 77 }]],
                   unicorn_calls("backlog" => 77)
    end

    it "preloads the app, checks client connections, both ways, and sets the timeout" do
      %w[preload_app check_client_connection].each do |key|
        assert_equal [[key.to_sym, true]], calls_named(unicorn_calls(key => true), key.to_sym)
        assert_equal [[key.to_sym, false]], calls_named(unicorn_calls(key => false), key.to_sym)
        assert_empty calls_named(unicorn_calls({}), key.to_sym)
      end
      assert_equal [[:timeout, 30]], calls_named(unicorn_calls("timeout" => 30), :timeout)
      assert_empty calls_named(unicorn_calls({}), :timeout)
    end

    it "runs in the trial's environment" do
      assert_equal ["unicorn", "-c", File.join(@work, "unicorn.conf.rb"), "-E", "staging", "/apps/hello/config.ru"],
                   command("unicorn", environment: "staging")
    end
  end

  describe "pitchfork" do
    def pitchfork_calls(options) = config_calls("pitchfork", options, "pitchfork.conf.rb")

    it "writes its own options, and has no preload_app (its mold always loads the app)" do
      calls = pitchfork_calls("timeout" => 9, "refork_after" => [50, 100], "backlog" => 64,
                              "check_client_connection" => true)
      assert_equal [[:worker_processes, 2], [:listen, "127.0.0.1:4567", { backlog: 64 }], [:timeout, 9],
                    [:refork_after, [50, 100]], [:check_client_connection, true]], calls
      assert_equal [[:check_client_connection, false]],
                   calls_named(pitchfork_calls("check_client_connection" => false), :check_client_connection)
      assert_equal [[:worker_processes, 2], [:listen, "127.0.0.1:4567"]], pitchfork_calls({})
      error = assert_raises(Rackbench::ConfigError) { command("pitchfork", { "preload_app" => true }) }
      assert_equal "unknown option preload_app for pitchfork; supported: timeout, refork_after, backlog, " \
                   "check_client_connection, gc_compact_before_fork", error.message
    end

    it "runs in the trial's environment" do
      assert_includes command("pitchfork", environment: "staging").each_cons(2).to_a, ["-E", "staging"]
    end
  end

  describe "falcon" do
    it "adds a flag per option, --cache only when true" do
      base = command("falcon")
      assert_equal base + ["--cache"], command("falcon", { "cache" => true })
      assert_equal base, command("falcon", { "cache" => false })
      assert_equal base + ["--timeout", "2.5"], command("falcon", { "timeout" => 2.5 })
      assert_equal base + ["--preload", "preload.rb"], command("falcon", { "preload" => "preload.rb" })
      refute_includes base, "--cache"
      refute_includes base, "--timeout"
      refute_includes base, "--preload"
    end

    it "has no environment flag" do
      refute_includes command("falcon", environment: "staging"), "staging"
    end
  end

  describe "thin" do
    it "adds a flag per option, --no-epoll only when true" do
      base = command("thin", processes: 1)
      assert_equal base + ["--timeout", "5", "--max-conns", "200", "--max-persistent-conns", "1"],
                   command("thin", { "timeout" => 5, "max_conns" => 200, "max_persistent_conns" => 1 }, processes: 1)
      assert_equal base + ["--no-epoll"], command("thin", { "no_epoll" => true }, processes: 1)
      assert_equal base, command("thin", { "no_epoll" => false }, processes: 1)
      %w[--timeout --max-conns --max-persistent-conns --no-epoll].each { |flag| refute_includes base, flag }
    end

    it "runs in the trial's environment" do
      assert_includes command("thin", processes: 1, environment: "staging").each_cons(2).to_a,
                      ["--environment", "staging"]
    end
  end

  describe "iodine" do
    it "adds a flag per option before the rackup file, -v only when logging" do
      argv = command("iodine", { "keep_alive" => 3, "max_body" => 1, "max_header" => 8, "log" => true })
      assert_equal ["iodine", "-b", "127.0.0.1", "-p", "4567", "-w", "2", "-t", "1",
                    "-k", "3", "-ping", "40", "-maxbd", "1", "-maxhd", "8", "-v", "/apps/hello/config.ru"], argv
      base = command("iodine")
      assert_equal base, command("iodine", { "log" => false })
      %w[-k -ping -maxbd -maxhd -v].each { |flag| refute_includes base, flag }
    end
  end

  describe "agoo" do
    def script(options)
      File.read(command("agoo", options).first)
    end

    it "passes its options to Agoo::Server.init, pedantic both ways" do
      assert_includes script({ "pedantic" => true, "connection_timeout" => 2.5 }),
                      "thread_count: 0, pedantic: true, connection_timeout: 2.5)"
      assert_includes script({ "pedantic" => false }), "thread_count: 0, pedantic: false)"
      text = script({})
      assert_includes text, "thread_count: 0)"
      refute_includes text, "pedantic"
      refute_includes text, "connection_timeout"
      RubyVM::InstructionSequence.compile(script({ "pedantic" => true, "connection_timeout" => 1 }))
    end
  end

  describe "webrick" do
    it "takes no options" do
      error = assert_raises(Rackbench::ConfigError) { command("webrick", { "MaxClients" => 4 }, processes: 1) }
      assert_equal "webrick takes no options (got MaxClients)", error.message
      assert_equal [File.join(@work, "webrick_boot.rb")], command("webrick", {}, processes: 1)
    end
  end

  describe "every adapter" do
    it "refuses an unknown option and a value of the wrong type when building the command" do
      shipped.reject { |a| a.option_schema.empty? }.each do |a|
        error = assert_raises(Rackbench::ConfigError) { command(a.name, { "no_such_option" => 1 }, processes: 1) }
        assert_equal "unknown option no_such_option for #{a.name}; supported: #{a.option_schema.keys.join(", ")}",
                     error.message
        key = a.option_schema.keys.first
        error = assert_raises(Rackbench::ConfigError) { command(a.name, { key => { "x" => 1 } }, processes: 1) }
        assert_match(/\A#{a.name} option #{key}: must be .+, got a mapping\z/, error.message)
      end
    end

    it "keeps working for callers that pass neither options nor an environment" do
      shipped.each do |a|
        argv = a.command(app_dir: "/apps/hello", config_ru: "/apps/hello/config.ru", port: 4567, processes: 1,
                         threads: 1, work_dir: @work)
        assert(argv.all?(String), a.name)
      end
    end
  end
end
