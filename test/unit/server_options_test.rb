# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require "rackbench/server_options"
require "rackbench/servers"

describe Rackbench::ServerOptions do
  SO = Rackbench::ServerOptions

  describe "types" do
    it "accepts what each type says and nothing else" do
      accepts = {
        SO::BOOLEAN => [[true, false], [nil, "true", 1, 0]],
        SO::STRING => [["preload.rb"], ["", nil, 1, :sym, "a\0b"]],
        SO.integer(min: 3, max: 10) => [[3, 10], [2, 11, 3.0, "5", nil, true]],
        SO.integer(min: 0) => [[0, 10**9], [-1, 1.5]],
        SO.number(min: 0.1) => [[0.1, 1, 2.5], [0, 0.05, Float::INFINITY, Float::NAN, "1", nil]],
        SO.number(min: 0, max: 1) => [[0, 1, 0.5], [1.5, -0.1]],
        SO.integer_list(min: 1) => [[[1], [50, 100]], [[], [0], [1, "2"], 5, [1.5]]],
        SO.either(SO::BOOLEAN, SO.integer(min: 0)) => [[true, false, 0, 7], [-1, "x", nil]]
      }
      accepts.each do |type, (good, bad)|
        good.each { |value| assert type.accept?(value), "#{type} must accept #{value.inspect}" }
        bad.each { |value| refute type.accept?(value), "#{type} must refuse #{value.inspect}" }
      end
    end

    it "says what it accepts" do
      assert_equal "true or false", SO::BOOLEAN.text
      assert_equal "an integer 3-10", SO.integer(min: 3, max: 10).text
      assert_equal "a number >= 0.1", SO.number(min: 0.1).text
      assert_equal "a list of integers >= 1", SO.integer_list(min: 1).text
      assert_equal "true or false, or an integer >= 0", SO.either(SO::BOOLEAN, SO.integer(min: 0)).text
    end
  end

  describe SO::Schema do
    let(:schema) do
      SO::Schema.new(SO::Option.new(key: :timeout, type: SO.integer(min: 3), default: "60", effect: "e", reaches: "r"),
                     SO::Option.new(key: "preload_app", type: SO::BOOLEAN, default: "false", effect: "e", reaches: "r"))
    end

    it "lists its keys in order and describes problems without the key" do
      assert_equal %w[timeout preload_app], schema.keys
      assert_predicate schema, :frozen?
      assert_nil schema.problem("timeout", 5)
      assert_equal 'must be an integer >= 3, got "5s"', schema.problem("timeout", "5s")
      assert_equal "must be true or false, got a mapping", schema.problem("preload_app", { "a" => 1 })
      assert_equal "must be true or false, got a list [1]", schema.problem("preload_app", [1])
      assert_equal "unknown option", schema.problem("nope", 1)
    end

    it "validates a whole options Hash, naming the server" do
      assert_equal({ "timeout" => 5 }, schema.validate!({ timeout: 5 }, "unicorn"))
      assert_equal({}, schema.validate!(nil, "unicorn"))
      error = assert_raises(Rackbench::ConfigError) { schema.validate!({ "timout" => 5 }, "unicorn") }
      assert_equal "unknown option timout for unicorn; supported: timeout, preload_app", error.message
      error = assert_raises(Rackbench::ConfigError) { schema.validate!({ "timeout" => 1 }, "unicorn") }
      assert_equal "unicorn option timeout: must be an integer >= 3, got 1", error.message
      error = assert_raises(Rackbench::ConfigError) { SO::NONE.validate!({ "x" => 1 }, "webrick") }
      assert_equal "webrick takes no options (got x)", error.message
      assert_equal({}, SO::NONE.validate!({}, "webrick"))
    end
  end

  describe "the shipped adapters" do
    # Other tests register fakes of their own.
    def shipped
      Dir[File.expand_path("../../lib/rackbench/servers/*.rb", __dir__)].map do |path|
        Rackbench::Servers.fetch(File.basename(path, ".rb"))
      end
    end

    it "document every option they declare" do
      shipped.each do |adapter|
        adapter.option_schema.each do |option|
          assert_match(/\A[a-z_]+\z/, option.key)
          %i[default effect reaches].each do |field|
            refute_empty option.public_send(field).to_s, "#{adapter.name} #{option.key}: #{field}"
            refute_includes option.public_send(field), "|", "a | would break doc/servers.md's table"
          end
        end
      end
    end

    it "are documented in doc/servers.md exactly as declared" do
      doc = File.read(File.expand_path("../../doc/servers.md", __dir__))
      section = doc[/^## Options\n.*?(?=^## )/m]
      refute_nil section, "doc/servers.md has no Options section"
      shipped.each do |adapter|
        part = section[/^### #{adapter.name}\n.*?(?=^### |\z)/m]
        refute_nil part, "doc/servers.md: no Options table for #{adapter.name}"
        if adapter.option_schema.empty?
          assert_includes part, "#{adapter.name.sub("webrick", "WEBrick")} takes no options"
          next
        end
        rows = part.lines.grep(/^\| `/).map(&:chomp)
        expected = adapter.option_schema.map do |o|
          "| `#{o.key}` | #{o.type.text} | #{o.default} | #{o.effect} | #{o.reaches} |"
        end
        assert_equal expected, rows, "doc/servers.md's #{adapter.name} table differs from its OPTIONS"
      end
    end

    it "answer nil for a server that is not registered" do
      assert_nil Rackbench::Servers.option_schema("no-such-server")
      assert_same Rackbench::Servers.fetch("unicorn").option_schema, Rackbench::Servers.option_schema(:unicorn)
    end
  end

  describe "loading an experiment" do
    before { @dir = Dir.mktmpdir("rackbench-options") }
    after { FileUtils.remove_entry(@dir) }

    def write_experiment(servers_yaml)
      path = File.join(@dir, "experiment.yml")
      File.write(path, "name: t\nservers:\n#{servers_yaml}apps: [rack-hello]\n")
      path
    end

    it "asks the server registry for each adapter's options" do
      schemas = Rackbench::Experiment.option_schemas
      assert_same Rackbench::Servers.fetch("puma").option_schema, schemas.call("puma")
      assert_nil schemas.call("no-such-server")
    end

    it "refuses a wrong option before anything runs" do
      path = write_experiment("  - { name: unicorn, options: { preload_ap: true } }\n")
      results = File.join(@dir, "results")
      out = StringIO.new
      err = StringIO.new
      code = Rackbench::CLI.run(["run", path, "--results", results], out: out, err: err)
      assert_equal Rackbench::CLI::EXIT_USAGE, code
      assert_equal "rackbench: #{path}: servers[0].options.preload_ap: unknown option for unicorn (did you mean " \
                   "preload_app?); supported: preload_app, timeout, backlog, check_client_connection, gc_compact_before_fork\n", err.string
      refute File.exist?(results), "nothing may run (or be stored) for an experiment with a wrong option"
    end

    it "plans a Puma cluster-only option with workers and skips it in single mode, with the reason" do
      experiment = Rackbench::Experiment.parse("name: t\nservers: [{ name: puma, options: { preload: false } }]\n" \
                                               "apps: [rack-hello]\nprocesses: [1, 2]\n")
      adapter = Rackbench::Servers.fetch("puma")
      reasons = experiment.configurations.to_h do |config|
        [config.processes, adapter.unsupported_reason(processes: config.processes, threads: config.threads,
                                                      ruby_engine: "ruby", options: config.server.options)]
      end
      assert_nil reasons[2]
      assert_equal "puma runs in single mode with processes 1: preload applies to cluster mode only (processes > 1)",
                   reasons[1]
    end
  end
end
