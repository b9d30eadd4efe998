# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/experiments/experiment_support"

# Every way an experiment file can be wrong: one line naming the file and
# the key (and, for a misspelling, the allowed keys and a suggestion).
describe "Rackbench::Experiment errors" do
  include Rackbench::Test::ExperimentSupport

  describe "the file" do
    it "reports a missing file" do
      error = assert_raises(Rackbench::ConfigError) { Rackbench::Experiment.load("/nonexistent/experiment.yml") }
      assert_equal "experiment file not found: /nonexistent/experiment.yml", error.message
    end

    it "reports a directory given as the file" do
      error = assert_raises(Rackbench::ConfigError) { Rackbench::Experiment.load(fixture("myapp")) }
      assert_includes error.message, "experiment file is a directory"
    end

    it "reports invalid YAML in one line with the line of the mistake" do
      error = assert_raises(Rackbench::ConfigError) { Rackbench::Experiment.load(fixture("bad_indent.yml"), **known) }
      assert_equal "#{fixture("bad_indent.yml")}: invalid YAML at line 8: did not find expected key " \
                   "while parsing a block mapping", error.message
      assert_config_error "name: t\nservers: [puma\napps: [rack-hello]\n", "invalid YAML at line"
    end

    it "rejects aliases" do
      assert_config_error "name: t\nservers: &s [puma]\napps: *s\n", "apps: YAML aliases (*s) are not allowed, at line 3"
    end

    it "rejects a key given twice, which YAML would silently drop" do
      assert_config_error "name: t\nservers: [puma]\napps: [rack-hello]\nload:\n  duration: 5s\n  duration: 10s\n",
                          "load.duration: duplicate key at line 6 (first at line 5)"
    end

    it "rejects values YAML would turn into objects" do
      assert_config_error "name: t\nservers: [puma]\napps: [rack-hello]\nseed: 2024-01-01\n",
                          "invalid YAML: unsupported value of type Date (quote it"
    end

    it "rejects a second YAML document, which would be ignored" do
      assert_config_error "name: t\nservers: [puma]\napps: [rack-hello]\n---\nname: u\n", "holds 2 YAML documents"
    end

    it "rejects an empty file and a file that is not a mapping" do
      assert_config_error "# nothing yet\n", "empty experiment file"
      assert_config_error "- puma\n", "must be a mapping of keys"
    end
  end

  describe "top-level keys" do
    it "names an unknown key, suggests the right one and lists the allowed ones" do
      error = assert_config_error({ "sever" => ["puma"] }, "sever: unknown key (did you mean servers?)")
      assert_includes error.message, "allowed: name, seed, batches, rubies, servers, apps, processes, threads, load, env, pass_env, exclude"
    end

    it "requires name, servers and apps" do
      assert_config_error({ "name" => nil }, "experiment.yml: name: required")
      assert_config_error({ "servers" => nil }, "servers: required")
      assert_config_error({ "apps" => nil }, "apps: required")
    end

    it "checks the name" do
      assert_config_error({ "name" => "Puma vs WEBrick" }, 'name: "Puma vs WEBrick" is not a valid experiment name')
      assert_config_error({ "name" => 42 }, "name: must be a string, got 42")
    end

    it "checks seed and batches" do
      assert_config_error({ "seed" => "abc" }, 'seed: must be an integer >= 0, got "abc"')
      assert_config_error({ "seed" => 1.5 }, "seed: must be an integer >= 0, got 1.5")
      assert_config_error({ "batches" => 0 }, "batches: must be an integer >= 1, got 0")
      assert_config_error "name: t\nservers: [puma]\napps: [rack-hello]\nbatches:\n", "batches: must be an integer >= 1, got nothing (null)"
    end

    it "checks processes and threads, element by element" do
      assert_config_error({ "processes" => [1, 0] }, "processes[1]: must be an integer >= 1, got 0")
      assert_config_error({ "threads" => "four" }, 'threads: must be an integer >= 1, got "four"')
      assert_config_error({ "threads" => [] }, "threads: must not be an empty list")
      assert_config_error({ "processes" => [1, 2, 1] }, "processes: duplicate value 1")
    end
  end

  describe "rubies" do
    it "rejects duplicate labels" do
      assert_config_error({ "rubies" => ["ruby", { "name" => "ruby", "options" => ["--yjit"] }] },
                          'rubies[1]: duplicate name "ruby" (also rubies[0]); give each entry its own name')
    end

    it "needs a name in a mapping, and a valid one" do
      assert_config_error({ "rubies" => [{ "ruby" => "ruby", "options" => ["--yjit"] }] }, "rubies[0].name: required")
      assert_config_error({ "rubies" => [{ "name" => "ruby yjit" }] }, 'rubies[0].name: "ruby yjit" is not a valid label')
    end

    it "names a misspelt key inside an entry" do
      assert_config_error({ "rubies" => [{ "name" => "y", "option" => ["--yjit"] }] },
                          "rubies[0].option: unknown key (did you mean options?); allowed: name, ruby, options, env")
    end

    it "rejects a relative ruby path" do
      assert_config_error({ "rubies" => ["bin/ruby"] }, 'rubies[0]: "bin/ruby": a ruby path must be absolute')
      assert_config_error({ "rubies" => [{ "name" => "x", "ruby" => "rubies/bin/ruby" }] }, "rubies[0].ruby: ")
    end

    it "rejects options that are not switches" do
      assert_config_error({ "rubies" => [{ "name" => "y", "options" => ["yjit"] }] },
                          'rubies[0].options[0]: "yjit" must start with -')
    end

    it "checks the ruby's env" do
      assert_config_error({ "rubies" => [{ "name" => "y", "env" => { "1BAD" => "x" } }] },
                          'rubies[0].env.1BAD: "1BAD" is not a valid environment variable name')
      assert_config_error({ "rubies" => [{ "name" => "y", "env" => ["MALLOC_ARENA_MAX=2"] }] },
                          "rubies[0].env: must be a mapping")
      assert_config_error({ "rubies" => [{ "name" => "y", "env" => { "X" => true } }] },
                          "rubies[0].env.X: must be a string or a number, got true")
    end
  end

  describe "servers" do
    it "names an unknown server and suggests the right one" do
      assert_config_error({ "servers" => %w[puma pumma] },
                          'servers[1]: unknown server "pumma" (did you mean puma?); known: puma, webrick, unicorn, falcon')
    end

    it "rejects duplicate labels" do
      assert_config_error({ "servers" => ["puma", { "name" => "puma" }] }, 'servers[1]: duplicate label "puma"')
    end

    it "checks an entry's keys and options" do
      assert_config_error({ "servers" => [{ "name" => "puma", "lable" => "p" }] }, "servers[0].lable: unknown key (did you mean label?)")
      assert_config_error({ "servers" => [{ "name" => "puma", "options" => "--preload" }] }, "servers[0].options: must be a mapping")
      assert_config_error({ "servers" => [{ "label" => "p" }] }, "servers[0].name: required")
    end

    it "refuses an option the adapter does not know, suggesting one and listing those it supports" do
      error = assert_config_error({ "servers" => [{ "name" => "unicorn", "options" => { "preload_ap" => true } }] })
      assert_equal "experiment.yml: servers[0].options.preload_ap: unknown option for unicorn (did you mean " \
                   "preload_app?); supported: preload_app, timeout, backlog, check_client_connection, gc_compact_before_fork", error.message
      error = assert_config_error({ "servers" => ["puma", { "name" => "puma", "label" => "p2",
                                                            "options" => { "preload_app" => true } }] })
      assert_match(/\Aexperiment\.yml: servers\[1\]\.options\.preload_app: unknown option for puma \(did you mean preload\?\); supported: preload, fork_worker, /,
                   error.message)
      assert_config_error({ "servers" => [{ "name" => "puma", "options" => { "zzz" => 1 } }] },
                          "servers[0].options.zzz: unknown option for puma; supported: preload,")
      assert_config_error({ "servers" => [{ "name" => "puma", "options" => { 1 => true } }] },
                          "servers[0].options.1: unknown option for puma")
    end

    it "says when an adapter takes no options" do
      error = assert_config_error({ "servers" => [{ "name" => "webrick", "options" => { "MaxClients" => 4 } }] })
      assert_equal "experiment.yml: servers[0].options.MaxClients: webrick takes no options", error.message
      assert_equal [{}], build_experiment("servers" => [{ "name" => "webrick", "options" => {} }]).servers.map(&:options)
    end

    it "refuses an option value of the wrong type or range" do
      {
        { "name" => "puma", "options" => { "preload" => "yes" } } => 'preload: must be true or false, got "yes"',
        { "name" => "puma", "options" => { "fork_worker" => -1 } } =>
          "fork_worker: must be true or false, or an integer >= 0, got -1",
        { "name" => "puma", "options" => { "backlog" => 0 } } => "backlog: must be an integer >= 1, got 0",
        { "name" => "puma", "options" => { "wait_for_less_busy_worker" => "5ms" } } =>
          'wait_for_less_busy_worker: must be a number >= 0, got "5ms"',
        { "name" => "unicorn", "options" => { "timeout" => "30s" } } => 'timeout: must be an integer 3-2592000, got "30s"',
        { "name" => "unicorn", "options" => { "timeout" => 2 } } => "timeout: must be an integer 3-2592000, got 2",
        { "name" => "unicorn", "options" => { "preload_app" => nil } } => "preload_app: must be true or false, got nothing (null)",
        { "name" => "falcon", "options" => { "timeout" => 0 } } => "timeout: must be a number >= 0.1, got 0",
        { "name" => "falcon", "options" => { "preload" => "" } } => 'preload: must be a string, got ""'
      }.each do |entry, message|
        assert_config_error({ "servers" => [entry] }, "servers[0].options.#{message}")
      end
    end

    it "accepts every option of the right type and keeps it frozen" do
      options = { "preload" => false, "fork_worker" => 0, "queue_requests" => true, "wait_for_less_busy_worker" => 0.01,
                  "max_keep_alive" => 100, "enable_keep_alives" => false, "persistent_timeout" => 30, "backlog" => 512 }
      spec = build_experiment("servers" => [{ "name" => "puma", "options" => options }]).servers.first
      assert_equal options, spec.options
      assert_predicate spec.options, :frozen?
    end

    it "leaves the options to the adapter when no option schema is known" do
      experiment = parse_yaml("name: t\nservers: [{ name: puma, options: { anything: 1 } }]\napps: [rack-hello]\n",
                              option_schemas: ->(_name) {})
      assert_equal({ "anything" => 1 }, experiment.servers.first.options)
    end

    it "rejects an empty list and nothing" do
      assert_config_error({ "servers" => [] }, "servers: must not be an empty list")
      assert_config_error "name: t\nservers:\napps: [rack-hello]\n", "servers: must be a value or a list, got nothing (null)"
    end
  end

  describe "apps" do
    it "names an unknown built-in app and suggests the right one" do
      assert_config_error({ "apps" => ["rack-helo"] },
                          'apps[0]: unknown built-in app "rack-helo" (did you mean rack-hello?); known: rack-hello, rails-blog; ' \
                          "for your own app write a mapping with name: and path:")
    end

    it "needs a path for an app that is not built in" do
      assert_config_error({ "apps" => [{ "name" => "myapp", "health" => "/up" }] },
                          'apps[0].path: required: "myapp" is not a built-in app; built-in: rack-hello, rails-blog')
    end

    it "needs a path that exists and holds config.ru" do
      assert_config_error({ "apps" => [{ "name" => "a", "path" => "nope" }] }, 'apps[0].path: "nope" is not a directory')
      assert_config_error({ "apps" => [{ "name" => "a", "path" => "no_config_ru" }] }, 'apps[0].path: "no_config_ru" has no config.ru')
    end

    it "checks health, load_path, expect_status and expect_body" do
      app = { "name" => "a", "path" => "myapp" }
      assert_config_error({ "apps" => [app.merge("health" => "up")] }, 'apps[0].health: "up" must start with /')
      assert_config_error({ "apps" => [app.merge("load_path" => "/a b")] }, "apps[0].load_path: ")
      assert_config_error({ "apps" => [app.merge("expect_status" => 999)] }, "apps[0].expect_status: must be an integer 100-599, got 999")
      assert_config_error({ "apps" => [app.merge("expect_body" => 5)] }, "apps[0].expect_body: must be a string")
      assert_config_error({ "apps" => [app.merge("expect_content_type" => [])] }, "apps[0].expect_content_type: must be a string")
      assert_config_error({ "apps" => [{ "name" => "rack-hello", "health" => "up" }] }, 'apps[0].health: "up" must start with /')
      assert_config_error({ "apps" => [app.merge("expect" => 200)] }, "apps[0].expect: unknown key (did you mean")
    end

    it "rejects two apps with one name" do
      assert_config_error({ "apps" => ["rack-hello", { "name" => "rack-hello", "path" => "myapp" }] },
                          'apps[1]: duplicate name "rack-hello"')
    end
  end

  describe "load" do
    it "names a misspelt key with a suggestion and the allowed keys" do
      assert_config_error({ "load" => { "conections" => 4 } },
                          "experiment.yml: load.conections: unknown key (did you mean connections?); " \
                          "allowed: connections, threads, duration, warmup, rate, keepalive, requests, timeout")
    end

    it "checks durations and names the key" do
      assert_config_error({ "load" => { "duration" => "10 secs" } }, 'load.duration: invalid duration "10 secs"')
      assert_config_error({ "load" => { "duration" => 0 } }, "load.duration: must be more than 0")
      assert_config_error({ "load" => { "warmup" => ["1s", "-1s"] } }, 'load.warmup[1]: invalid duration "-1s"')
      assert_config_error({ "load" => { "timeout" => "0s" } }, "load.timeout: must be at least 1ms")
      assert_config_error({ "load" => { "duration" => ["5s", 5] } }, "load.duration: duplicate value 5.0")
    end

    it "checks the other load values" do
      assert_config_error({ "load" => { "connections" => 0 } }, "load.connections: must be an integer >= 1, got 0")
      assert_config_error({ "load" => { "threads" => 2000 } }, "load.threads: must be an integer 1-1024, got 2000")
      assert_config_error({ "load" => { "keepalive" => "yes please" } }, 'load.keepalive: must be true or false, got "yes please"')
      assert_config_error({ "load" => { "rate" => -5 } }, "load.rate: must be requests/s > 0 or null")
      assert_config_error({ "load" => { "requests" => "nope.txt" } }, 'load.requests: "nope.txt" not found')
      assert_config_error({ "load" => ["duration"] }, "load: must be a mapping")
    end

    it "needs a connection for every engine thread" do
      assert_config_error({ "load" => { "connections" => 2, "threads" => 4 } },
                          "load.threads: 4 engine threads but only 2 load.connections")
    end
  end

  describe "env" do
    it "checks names and values" do
      assert_config_error({ "env" => { "bad-name" => "1" } }, 'env.bad-name: "bad-name" is not a valid environment variable name')
      assert_config_error({ "env" => { "FOO" => { "a" => 1 } } }, "env.FOO: must be a string or a number, got a mapping")
      assert_config_error({ "env" => { "FOO" => [] } }, "env.FOO: must not be an empty list")
      assert_config_error({ "env" => "FOO=1" }, "env: must be a mapping")
    end

    it "keeps the RACKBENCH_* variables rackbench's own, wherever they are given" do
      assert_config_error({ "env" => { "RACKBENCH_TRIAL_DIR" => "/x" } },
                          "env.RACKBENCH_TRIAL_DIR: RACKBENCH_TRIAL_DIR is reserved")
      assert_config_error({ "rubies" => [{ "name" => "r", "ruby" => "ruby", "env" => { "RACKBENCH_X" => "1" } }] },
                          "rubies[0].env.RACKBENCH_X: RACKBENCH_X is reserved")
      assert_config_error({ "apps" => [{ "name" => "rack-hello", "env" => { "RACKBENCH_RESULTS_DIR" => "/" } }] },
                          "apps[0].env.RACKBENCH_RESULTS_DIR: RACKBENCH_RESULTS_DIR is reserved")
      assert_config_error({ "pass_env" => ["RACKBENCH_TRIAL_DIR"] }, "pass_env[0]: RACKBENCH_TRIAL_DIR is reserved")
    end
  end

  describe "pass_env and an app's env" do
    it "checks names, duplicates and types" do
      assert_config_error({ "pass_env" => ["bad-name"] }, 'pass_env[0]: "bad-name" is not a valid environment variable name')
      assert_config_error({ "pass_env" => %w[A A] }, "pass_env: duplicate value \"A\"")
      assert_config_error("name: t\nservers: [puma]\napps: [rack-hello]\npass_env:\n",
                          "pass_env: must be a value or a list, got nothing (null)")
      assert_config_error({ "apps" => [{ "name" => "rack-hello", "env" => "A=1" }] }, "apps[0].env: must be a mapping")
      assert_config_error({ "apps" => [{ "name" => "rack-hello", "env" => { "A" => [1] } }] },
                          "apps[0].env.A: must be a string or a number, got a list")
    end
  end

  describe "load.cookies" do
    it "is true, false or null" do
      assert_config_error({ "load" => { "cookies" => "yes" } }, 'load.cookies: must be true or false, got "yes"')
    end
  end

  describe "apps[].expect_session_body" do
    it "is one line of text" do
      assert_config_error({ "apps" => [{ "name" => "rack-hello", "expect_session_body" => "a\nb" }] },
                          'apps[0].expect_session_body: must be one line of text, got "a\nb"')
      assert_config_error({ "apps" => [{ "name" => "rack-hello", "expect_session_body" => 3 }] },
                          "apps[0].expect_session_body: must be a string")
    end
  end

  describe "load.headers and load.preset_cookies" do
    it "are mappings of valid names and values, with a hint for a misspelt key" do
      assert_config_error({ "load" => { "header" => { "A" => "b" } } }, "load.header: unknown key (did you mean headers?)")
      assert_config_error({ "load" => { "preset_cookie" => { "a" => "b" } } },
                          "load.preset_cookie: unknown key (did you mean preset_cookies?)")
      assert_config_error({ "load" => { "headers" => "X-A: b" } }, "load.headers: must be a mapping")
      assert_config_error({ "load" => { "headers" => { "X A" => "b" } } }, "load.headers.X A: is not a valid header name")
      assert_config_error({ "load" => { "headers" => { "Host" => "x" } } }, "load.headers.Host: cannot be set (the engine sets it)")
      assert_config_error({ "load" => { "headers" => { "cookie" => "a=b" } } },
                          "load.headers.cookie: cannot be set (use load.preset_cookies)")
      assert_config_error({ "load" => { "headers" => { "X-A" => "b\r\nX-B: c" } } },
                          "load.headers.X-A: must not contain line breaks or control characters")
      assert_config_error({ "load" => { "headers" => { "X-A" => [1] } } }, "load.headers.X-A: must be a string, got [1]")
      assert_config_error({ "load" => { "preset_cookies" => { "a b" => "c" } } },
                          "load.preset_cookies.a b: is not a valid cookie name")
      assert_config_error({ "load" => { "preset_cookies" => { "a" => "b; c=d" } } },
                          "load.preset_cookies.a: must not contain ; or control characters")
      assert_config_error({ "load" => { "preset_cookies" => { "a" => "b" * 5000 } } },
                          "load.preset_cookies.a: is longer than 4096 bytes with its name")
      assert_config_error({ "load" => { "preset_cookies" => { "a" => "b" }, "cookies" => false } },
                          "load.preset_cookies: needs the cookie jar, but load.cookies is false")
    end
  end

  describe "exclude" do
    let(:sweep) { { "servers" => %w[puma webrick], "processes" => [1, 2], "load" => { "connections" => [8, 16] } } }

    it "names an unknown dimension and lists the dimensions" do
      assert_config_error(sweep.merge("exclude" => [{ "sever" => "webrick" }]),
                          "exclude[0].sever: unknown dimension (did you mean server?); " \
                          "dimensions: ruby, server, app, processes, threads, load.connections")
    end

    it "rejects a value that is not in the matrix, which would exclude nothing" do
      assert_config_error(sweep.merge("exclude" => [{ "server" => "webrik", "processes" => 2 }]),
                          'exclude[0].server: "webrik" is not in the matrix (did you mean webrick?); values: puma, webrick')
      assert_config_error(sweep.merge("exclude" => [{ "server" => "webrick", "processes" => 4 }]),
                          "exclude[0].processes: 4 is not in the matrix; values: 1, 2")
      assert_config_error(sweep.merge("exclude" => [{ "server" => "webrick", "processes" => "2" }]),
                          'exclude[0].processes: must be an integer >= 1, got "2"')
    end

    it "rejects a setting with one value, which is not a dimension" do
      assert_config_error(sweep.merge("exclude" => [{ "load.duration" => "10s" }]),
                          "exclude[0].load.duration: load.duration is not a dimension: it has one value")
    end

    it "rejects an empty entry, a non-mapping and excluding everything" do
      assert_config_error(sweep.merge("exclude" => [{}]), "exclude[0]: must name at least one dimension")
      assert_config_error(sweep.merge("exclude" => ["webrick"]), "exclude[0]: must be a mapping")
      assert_config_error(sweep.merge("exclude" => [{ "app" => "rack-hello" }]), "exclude: removes every configuration")
      assert_config_error(sweep.merge("exclude" => []), "exclude: must not be an empty list")
    end
  end

  it "refuses a matrix too large to be meant" do
    assert_config_error({ "processes" => (1..30).to_a, "threads" => (1..30).to_a, "env" => { "X" => (1..20).to_a } },
                        "the matrix has 18000 configurations (at most 10000)")
  end
end
