# frozen_string_literal: true

require "test_helper"
require "rackbench/servers"

describe Rackbench::Servers do
  ALL_SERVERS = %w[agoo falcon iodine pitchfork puma thin unicorn webrick].freeze

  before { @work = Dir.mktmpdir("rackbench-servers") }
  after { FileUtils.remove_entry(@work) }

  def server(name) = Rackbench::Servers.fetch(name)

  def command(name, processes: 1, threads: 1, port: 4567)
    server(name).command(app_dir: "/apps/hello", config_ru: "/apps/hello/config.ru", port: port,
                         processes: processes, threads: threads, work_dir: @work)
  end

  def reason(name, processes: 1, threads: 1, ruby_engine: "ruby")
    server(name).unsupported_reason(processes: processes, threads: threads, ruby_engine: ruby_engine)
  end

  # Generated Ruby (config files, boot scripts) must at least compile.
  def assert_valid_ruby(path)
    RubyVM::InstructionSequence.compile(File.read(path), path)
  rescue SyntaxError => e
    flunk "#{path} is not valid Ruby: #{e.message}"
  end

  describe "registry" do
    # Other tests in the same process may register adapters of their own.
    it "lists every shipped adapter, each registered under its file's name" do
      assert_empty ALL_SERVERS - Rackbench::Servers.names
      assert_equal Rackbench::Servers.names.sort, Rackbench::Servers.names
      Rackbench::Servers.all.each { |adapter| assert_same adapter, server(adapter.name) }
      assert_same server("puma"), server(:puma)
    end

    it "gives adapters defaults for the optional parts" do
      adapter = Class.new(Rackbench::Servers::Adapter) { def name = "extra" }.new
      assert_equal "extra", adapter.to_s
      assert_equal 1, adapter.worker_processes(4)
      assert_nil adapter.ready_log(4)
      assert_nil adapter.unsupported_reason(processes: 4, threads: 4, ruby_engine: "ruby")
      assert_same Rackbench::ServerOptions::NONE, adapter.option_schema
      assert_raises(NotImplementedError) { adapter.server_gem }
    end

    it "names the known servers when asked for an unknown one" do
      error = assert_raises(Rackbench::ConfigError) { server("pumma") }
      assert_match(/\Aunknown server "pumma" \(known: agoo, (.+, )?falcon, (.+, )?webrick\)\z/, error.message)
      ALL_SERVERS.each { |name| assert_includes error.message, name }
      assert_raises(Rackbench::ConfigError) { server("../servers") }
    end
  end

  describe "every adapter" do
    it "answers the whole interface" do
      ALL_SERVERS.map { |name| server(name) }.each do |adapter|
        assert_kind_of String, adapter.supports
        refute_empty adapter.gem_lines("ruby")
        adapter.gem_lines("ruby").each { |line| assert_match(/\Agem "[a-z0-9_-]+"(, "[<>=~ \d.]+")?\z/, line) }
        # RACK_ENV and RAILS_ENV are rackbench's (Trial::ServerEnv), not an adapter's.
        assert_equal({}, adapter.env)
        assert_equal adapter.gem_lines("ruby").first[/\Agem "([^"]+)"/, 1], adapter.server_gem
        assert_kind_of Rackbench::ServerOptions::Schema, adapter.option_schema
        assert_same adapter.option_schema, Rackbench::Servers.option_schema(adapter.name)
        assert_operator adapter.worker_processes(1), :>=, 1

        argv = command(adapter.name, processes: 1, threads: 1)
        assert(argv.all?(String), "#{adapter.name}: argv must be Strings: #{argv.inspect}")
        text = argv.join(" ") + Dir[File.join(@work, "*")].map { |f| File.read(f) }.join
        assert_includes text, "127.0.0.1", "#{adapter.name} must bind 127.0.0.1 explicitly"
        assert_includes text, "4567", "#{adapter.name} must bind the given port"
        Dir[File.join(@work, "*.rb")].each { |path| assert_valid_ruby(path) }
      end
    end

    it "refuses non-positive counts" do
      ALL_SERVERS.each do |name|
        assert_match(/processes must be a positive integer/, reason(name, processes: 0))
        assert_match(/threads must be a positive integer/, reason(name, threads: "2"))
      end
    end

    it "runs 1 x 1 on CRuby" do
      ALL_SERVERS.each { |name| assert_nil reason(name), name }
    end

    it "knows which servers JRuby can run" do
      assert_nil reason("puma", threads: 4, ruby_engine: "jruby")
      assert_nil reason("webrick", threads: 4, ruby_engine: "jruby")
      assert_match(/JRuby cannot fork workers: processes must be 1/, reason("puma", processes: 2, ruby_engine: "jruby"))
      %w[agoo falcon iodine pitchfork thin unicorn].each do |name|
        assert_match(/does not run on JRuby/, reason(name, ruby_engine: "jruby"))
      end
    end
  end

  describe "puma" do
    it "runs a cluster for processes > 1 and single mode otherwise" do
      expected = ["puma", "--config", File.join(@work, "puma.rb"), "--environment", "production",
                  "--bind", "tcp://127.0.0.1:4567", "--threads", "2:2", "--workers", "3", "/apps/hello/config.ru"]
      assert_equal expected, command("puma", processes: 3, threads: 2)
      assert_includes command("puma", processes: 1, threads: 5).each_cons(2).to_a, ["--workers", "0"]
      assert_equal 4, server("puma").worker_processes(3)
      assert_equal 1, server("puma").worker_processes(1)
      pattern, count = server("puma").ready_log(3)
      assert_equal 3, count
      assert_match pattern, "[123] - Worker 0 (PID: 456) booted in 0.01s, phase: 0"
      pattern, count = server("puma").ready_log(1)
      assert_equal 1, count
      assert_match pattern, "Use Ctrl-C to stop"
      assert_equal ['gem "puma"'], server("puma").gem_lines("jruby")
    end
  end

  describe "webrick" do
    it "boots through a generated script with MaxClients = threads" do
      argv = command("webrick", threads: 8)
      assert_equal [File.join(@work, "webrick_boot.rb")], argv
      assert File.executable?(argv[0])
      script = File.read(argv[0])
      assert script.start_with?("#!/usr/bin/env ruby\n")
      assert_includes script, 'Host: "127.0.0.1", Port: 4567, MaxClients: 8, AccessLog: []'
      assert_includes script, 'Rack::Builder.parse_file("/apps/hello/config.ru")'
      assert_match(/single process/, reason("webrick", processes: 2))
      assert_equal ['gem "webrick"', 'gem "rackup"'], server("webrick").gem_lines("ruby")
      assert_equal 1, server("webrick").worker_processes(1)
    end
  end

  describe "unicorn and pitchfork" do
    it "write a config with the workers and the listen address" do
      %w[unicorn pitchfork].each do |name|
        argv = command(name, processes: 4)
        config = File.join(@work, "#{name}.conf.rb")
        assert_equal [name, "-c", config, "-E", "production", "/apps/hello/config.ru"], argv
        assert_match(/^worker_processes 4$/, File.read(config))
        assert_match(/^listen "127.0.0.1:4567"$/, File.read(config))
        assert_match(/single-threaded: threads must be 1/, reason(name, threads: 2))
        assert_equal 4, server(name).ready_log(4)[1]
      end
      assert_equal 5, server("unicorn").worker_processes(4)
      assert_equal 6, server("pitchfork").worker_processes(4) # monitor + mold + 4
      assert_includes server("unicorn").gem_lines("ruby"), 'gem "rack", "< 3"'
      assert_match server("unicorn").ready_log(1)[0], "I, [...] INFO -- : worker=0 ready"
      assert_match server("pitchfork").ready_log(1)[0], "INFO -- [Pitchfork]: worker=1 gen=0 pid=20511 ready"
    end
  end

  describe "falcon" do
    it "forks P reactors, or P processes of T reactor threads" do
      base = ["falcon", "serve", "--bind", "http://127.0.0.1:4567", "--config", "/apps/hello/config.ru"]
      assert_equal base + ["--forked", "--count", "2"], command("falcon", processes: 2)
      assert_equal base + ["--hybrid", "--forks", "2", "--threads", "3"], command("falcon", processes: 2, threads: 3)
      assert_equal 3, server("falcon").worker_processes(2)
      assert_equal 2, server("falcon").worker_processes(1)
    end
  end

  describe "thin" do
    it "threads through EventMachine's pool, one process only" do
      base = ["thin", "start", "--address", "127.0.0.1", "--port", "4567", "--environment", "production",
              "--rackup", "/apps/hello/config.ru"]
      assert_equal base, command("thin")
      assert_equal base + ["--threaded", "--threadpool-size", "4"], command("thin", threads: 4)
      assert_match(/processes must be 1/, reason("thin", processes: 2))
    end
  end

  describe "iodine" do
    it "passes workers and threads" do
      assert_equal ["iodine", "-b", "127.0.0.1", "-p", "4567", "-w", "2", "-t", "3", "/apps/hello/config.ru"],
                   command("iodine", processes: 2, threads: 3)
      assert_equal 3, server("iodine").worker_processes(2)
      assert_equal 1, server("iodine").worker_processes(1)
    end
  end

  describe "agoo" do
    it "boots through a generated script that passes the thread count" do
      argv = command("agoo", processes: 2, threads: 4)
      assert_equal [File.join(@work, "agoo_boot.rb")], argv
      script = File.read(argv[0])
      assert_includes script, 'bind: ["http://127.0.0.1:4567"]'
      assert_includes script, "worker_count: 2, thread_count: 4"
      assert_includes script, '"/apps/hello/public"'
      assert_match(/^sleep/, script)

      script = File.read(command("agoo", processes: 1, threads: 1)[0])
      assert_includes script, "worker_count: 1, thread_count: 0"
      refute_match(/^sleep/, script)
      assert_equal 2, server("agoo").worker_processes(2)
    end
  end
end
