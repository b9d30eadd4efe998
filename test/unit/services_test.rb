# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "../fixtures/fakes"

# The services' parts that need no service running: `services:` as the
# experiment file and app.yml give it (checked key by key, in the
# fingerprint only when given), each kind's command line, address and
# settings, the account a root runner uses, the workspace and what a dead
# run left of it, PostgreSQL's state and its comparison, a Running's
# restore check and documents, a Group's order, and what the report makes
# of the documents.
ServiceFiguresRecord = Struct.new(:services, :requests)

describe Rackbench::Services do
  def parse(apps)
    Rackbench::Experiment.parse(<<~YAML, source: "exp.yml")
      name: s
      servers: [puma]
      apps: #{apps}
    YAML
  end

  def specs(value)
    Rackbench::Services::Spec.list(value, "services", fail: ->(key, message) { raise Rackbench::ConfigError, "#{key}: #{message}" })
  end

  describe "services: in an experiment and an app.yml" do
    it "takes names and mappings, with the variable, a port and the service's own settings" do
      list = specs(["postgresql", { "name" => "redis", "env" => "CACHE_URL", "port" => 6390,
                                    "settings" => { "maxmemory" => "64mb", "lazyfree-lazy-eviction" => true } },
                    { "name" => "memcached", "settings" => { "memory_mb" => 32 } }])
      assert_equal %w[DATABASE_URL CACHE_URL MEMCACHE_SERVERS], list.map(&:env_name)
      assert_equal({ "maxmemory" => "64mb", "lazyfree-lazy-eviction" => "yes" }, list[1].settings)
      assert_equal 6390, list[1].port
      assert_equal "postgresql", list[0].canonical
      assert list.frozen? && list.all?(&:frozen?)
      assert_equal ["postgresql"], specs("postgresql").map(&:name), "one service may be written without brackets"
    end

    it "names the key of every mistake in one line" do
      {
        %([rack-hello, { name: cpu, services: [postgres] }]) =>
          "exp.yml: apps[1].services[0]: unknown service \"postgres\"; known: postgresql, redis, memcached",
        %([{ name: cpu, services: [{ name: redis, prot: 1 }] }]) =>
          "exp.yml: apps[0].services[0].prot: unknown key; allowed: name, env, port, settings",
        %([{ name: cpu, services: [{ name: redis, port: 70000 }] }]) =>
          "exp.yml: apps[0].services[0].port: must be a TCP port 1-65535, got 70000",
        %([{ name: cpu, services: [{ name: redis, env: RACKBENCH_X }] }]) =>
          "exp.yml: apps[0].services[0].env: must be an environment variable name (not RACKBENCH_*), got \"RACKBENCH_X\"",
        %([{ name: cpu, services: [postgresql, postgresql] }]) =>
          "exp.yml: apps[0].services: postgresql is listed twice; an app gets one of each service",
        %([{ name: cpu, services: [redis, { name: memcached, env: REDIS_URL }] }]) =>
          "exp.yml: apps[0].services: redis and memcached both set REDIS_URL; give one another env",
        %([{ name: cpu, services: [{ name: postgresql, settings: { port: 5 } }] }]) =>
          "exp.yml: apps[0].services[0].settings.port: set by rackbench (where the PostgreSQL listens and keeps " \
          "its data); not a setting",
        %([{ name: cpu, services: [{ name: memcached, settings: { memory: 5 } }] }]) =>
          "exp.yml: apps[0].services[0].settings.memory: unknown setting for memcached; known: memory_mb, threads, " \
          "connections (memcached -m, -t, -c)",
        %([{ name: cpu, services: [] }]) =>
          "exp.yml: apps[0].services: must name at least one service (postgresql, redis, memcached)"
      }.each do |apps, message|
        error = assert_raises(Rackbench::ConfigError, apps) { parse(apps) }
        assert_equal message, error.message
      end
    end

    it "keeps the fingerprint of a file without the key, and changes it with one" do
      plain = parse("[rack-hello]").fingerprint
      assert_equal plain, parse("[{ name: rack-hello }]").fingerprint
      with = parse("[{ name: rack-hello, services: [postgresql] }]").fingerprint
      refute_equal plain, with
      refute_equal with, parse("[{ name: rack-hello, services: [{ name: postgresql, port: 5433 }] }]").fingerprint
    end

    it "gives rails-posts-pg PostgreSQL from its app.yml, which an experiment's entry replaces" do
      assert_equal ["postgresql"], Rackbench::Apps.builtin("rails-posts-pg").services.map(&:name)
      assert_empty Rackbench::Apps.builtin("rails-posts").services
      resolve = ->(apps) { parse(apps).apps.map { |spec| Rackbench::App.resolve(spec) } }
      assert_equal [[], ["postgresql"]], resolve.call("[rails-posts, rails-posts-pg]").map { |a| a.services.map(&:name) }
      assert_equal [%w[redis]], resolve.call("[{ name: rails-posts-pg, services: [redis] }]").map { |a| a.services.map(&:name) }
      assert_equal [%w[postgresql]], resolve.call("[{ name: mix-users, services: [postgresql] }]").map { |a| a.services.map(&:name) }
    end
  end

  describe "the kinds" do
    let(:postgresql) { Rackbench::Services::Postgresql.new }
    let(:redis) { Rackbench::Services::Redis.new }
    let(:memcached) { Rackbench::Services::Memcached.new }

    def fake_paths(kind)
      kind.instance_variable_set(:@paths, kind.programs.to_h { |role, name| [role, "/bin/#{name}"] })
      kind
    end

    it "runs PostgreSQL on its socket only, or on 127.0.0.1 and a port, with the settings as -c" do
      pg = fake_paths(postgresql)
      socket = pg.endpoint(dir: "/t/pg", port: nil)
      argv = pg.argv(dir: "/t/pg", endpoint: socket, settings: { "shared_buffers" => "64MB" })
      assert_equal ["/bin/postgres", "-D", "/t/pg/data", "-p", "5432", "-c", "listen_addresses=", "-c",
                    "unix_socket_directories=/t/pg", "-c", "unix_socket_permissions=0700", "-c", "shared_buffers=64MB"], argv
      assert_equal "postgresql:///rackbench?host=/t/pg&user=rackbench", pg.url(socket)
      assert_equal "unix socket /t/pg", socket.to_s
      tcp = pg.endpoint(dir: "/t/pg", port: 5499)
      assert_includes pg.argv(dir: "/t/pg", endpoint: tcp, settings: {}), "listen_addresses=127.0.0.1"
      assert_equal "postgresql://rackbench@127.0.0.1:5499/rackbench", pg.url(tcp)
      assert_equal({ "PGHOST" => "/t/pg" }, pg.client_env(socket))
      assert_empty pg.client_env(tcp)
      assert_equal %w[DATABASE_URL PGHOST], specs("postgresql").first.env_names
      assert_equal %w[DATABASE_URL], specs([{ "name" => "postgresql", "port" => 5499 }]).first.env_names
      assert_equal "on", pg.setting_value(true)
      assert_nil pg.setting_problem("work_mem", "4MB")
      assert_equal "must be a string, number or true/false", pg.setting_problem("work_mem", [1])
    end

    it "runs Redis without snapshots of its own, its title left alone, the restore's command allowed locally" do
      r = fake_paths(redis)
      socket = r.endpoint(dir: "/t/r", port: nil)
      argv = r.argv(dir: "/t/r", endpoint: socket, settings: { "maxmemory" => "64mb" })
      assert_equal %w[--port 0], argv[1, 2]
      { "--unixsocket" => "/t/r/redis.sock", "--dbfilename" => "template.rdb", "--save" => "",
        "--appendonly" => "no", "--set-proc-title" => "no", "--enable-debug-command" => "local",
        "--maxmemory" => "64mb" }.each { |flag, value| assert_equal value, argv[argv.index(flag) + 1], flag }
      assert_equal "unix:///t/r/redis.sock", r.url(socket)
      tcp = r.endpoint(dir: "/t/r", port: 6391)
      assert_equal "redis://127.0.0.1:6391/0", r.url(tcp)
      assert_equal %w[--port 6391 --bind 127.0.0.1], r.argv(dir: "/t/r", endpoint: tcp, settings: {})[1, 4]
      assert_match(/set by rackbench/, r.setting_problem("dbfilename", "x.rdb"))
    end

    it "runs memcached on the loopback, a port of its own, no UDP, its settings as flags" do
      m = fake_paths(memcached)
      endpoint = m.endpoint(dir: "/t/m", port: 11_299)
      assert_equal %w[/bin/memcached -l 127.0.0.1 -p 11299 -U 0 -m 32 -t 2],
                   m.argv(dir: "/t/m", endpoint: endpoint, settings: { "memory_mb" => "32", "threads" => "2" })
      assert_equal "127.0.0.1:11299", m.url(endpoint)
      assert m.endpoint(dir: "/t/m", port: nil).port.positive?, "a free port when none is given"
    end

    it "says in one line which program is missing and which package brings it" do
      kind = Class.new(Rackbench::Services::Redis) { def programs = { server: "redis-server-not-here" } }.new
      assert_equal "service redis needs redis-server-not-here (Redis), which is not installed (Debian: apt-get " \
                   "install redis-server; bin/setup --all installs it)", kind.missing_reason
    end
  end

  describe Rackbench::Services::Account do
    it "runs as this user unless rackbench is root, then as the package's account" do
      assert_nil Rackbench::Services::Account.for("postgres", euid: 1000)
      error = assert_raises(Rackbench::SetupError) do
        Rackbench::Services::Account.for("no-such-account-here", euid: 0, title: "PostgreSQL")
      end
      assert_equal "PostgreSQL runs as the account no-such-account-here when rackbench runs as root, and there is " \
                   "no such account (Debian's package creates it: bin/setup --all installs it)", error.message
      root = Rackbench::Services::Account.for("root", euid: 0)
      assert_equal ["--reuid=0", "--regid=0", "--clear-groups", "--"], root.prefix.drop(1)
    end
  end

  describe Rackbench::Services::Workspace do
    let(:tmp) { Dir.mktmpdir("rackbench-ws") }
    let(:guard) { File.join(tmp, "guard").tap { |path| File.write(path, "#!/bin/sh\n") } }
    after { FileUtils.rm_rf(tmp) }

    it "holds its lock while it lives; a later run removes only the workspaces nobody holds" do
      live = Rackbench::Services::Workspace.create(tmpdir: tmp, guard: guard)
      assert File.executable?(live.guard_path)
      assert_equal "711", format("%o", File.stat(live.dir).mode & 0o777)
      dead = File.join(tmp, "#{Rackbench::Services::Workspace::PREFIX}dead")
      FileUtils.mkdir_p(dead)
      File.write(File.join(dead, Rackbench::Services::Workspace::LOCK), "")
      other = Rackbench::Services::Workspace.create(tmpdir: tmp, guard: guard)
      refute Dir.exist?(dead), "a workspace whose lock nobody holds is gone"
      assert Dir.exist?(live.dir), "a live run's is kept"
      service = live.service_dir("app-pg", nil)
      assert_equal "700", format("%o", File.stat(service).mode & 0o777)
      [live, other].each(&:remove)
      refute Dir.exist?(live.dir)
    end

    it "refuses a directory too long for a unix socket, naming TMPDIR" do
      deep = File.join(tmp, "d" * 60)
      FileUtils.mkdir_p(deep)
      workspace = Rackbench::Services::Workspace.create(tmpdir: deep, guard: guard)
      error = assert_raises(Rackbench::SetupError) { workspace.service_dir("app-postgresql", nil) }
      assert_match(/too long for a unix socket .*set TMPDIR to a shorter directory/, error.message)
    ensure
      workspace&.remove
    end
  end

  describe Rackbench::Services::PostgresqlState do
    it "reads the count of every table and names the first that differs" do
      template = Rackbench::Services::PostgresqlState.parse("public.authors\t50\npublic.posts\t1000\n")
      assert_equal({ "tables" => 2, "rows" => 1050, "rows_by_table" => { "public.authors" => 50, "public.posts" => 1000 } },
                   template)
      changed = Rackbench::Services::PostgresqlState.parse("public.authors\t50\npublic.posts\t1001\n")
      assert_equal "public.posts holds 1001 rows, the template 1000",
                   Rackbench::Services::PostgresqlState.difference(template, changed)
      assert_nil Rackbench::Services::PostgresqlState.difference(template, template)
    end
  end

  describe Rackbench::Services::Running do
    # A kind whose state is what the test says.
    let(:kind) do
      Class.new(Rackbench::Services::Postgresql) do
        attr_accessor :rows

        def keep_template(_) = state(nil)
        def restore(_) = state(nil)
        def state(_) = Rackbench::Services::PostgresqlState.parse("public.t\t#{rows}\n")
        def version = "15.0"
      end.new.tap { |k| k.rows = 10 }
    end
    let(:process) { Struct.new(:alive, :log_path) { def alive? = alive }.new(true, "/l/service.log") }
    let(:sampler) { Struct.new(:summary) { def start = self; def stop = summary }.new({ cpu_user_s: 0.2, duration_s: 1.0 }) }
    let(:running) do
      spec = Rackbench::Services::Spec.new(name: "postgresql", env: nil, port: nil, settings: {})
      Rackbench::Services::Running.new(kind: kind, spec: spec, app_name: "app", process: process,
                                       endpoint: kind.endpoint(dir: "/t", port: nil), dir: "/t", account: "postgres",
                                       boot_s: 0.5, sampler: ->(_) { sampler }, stop_grace_s: 1)
    end

    it "restores, checks the state against the template's, and documents the trial" do
      running.keep_template!
      kind.rows = 11 # the template is 10 rows; what a restore leaves must be too
      error = assert_raises(Rackbench::SetupError) { running.restore! }
      assert_equal "service postgresql of app app: the state restored from the template differs from it: public.t " \
                   "holds 11 rows, the template 10", error.message
      kind.rows = 10
      running.restore!
      running.start
      running.stop
      doc = running.to_h
      assert_equal({ "tables" => 1, "rows" => 10 }, doc["state"])
      assert_equal({ "cpu_user_s" => 0.2, "duration_s" => 1.0 }, doc["sample"])
      assert_equal %w[postgresql postgres 15.0 DATABASE_URL postgres], doc.values_at("name", "program", "version", "env", "account")
      assert_equal({ "DATABASE_URL" => "postgresql:///rackbench?host=/t&user=rackbench", "PGHOST" => "/t" }, running.env,
                   "PGHOST for a client that drops the URL's host (Rails 6.1)")
      running.begin_trial
      refute running.to_h.key?("sample"), "a new trial forgets the last one's window"
    end
  end

  describe Rackbench::Services::Group do
    it "keeps the template once, then restores every service before every trial" do
      kind = Rackbench::Services.fetch("redis")
      spec = Rackbench::Services::Spec.new(name: "redis", env: nil, port: nil, settings: {})
      services = [Fakes::RunningService.new(kind, spec, "a"), Fakes::RunningService.new(kind, spec, "a")]
      group = Rackbench::Services::Group.new("a", services)
      refute group.templated?
      2.times { group.prepare_trial! }
      assert group.templated?
      assert_equal [%i[keep_template restore restore]] * 2, services.map(&:events)
      assert_nil group.failure("during the measurement")
      services.last.alive = false
      assert_match(/killed by signal 9 \(SIGKILL\) during the measurement\z/, group.failure("during the measurement"))
    end
  end

  describe Rackbench::Report::ServiceFigures do

    it "gives each service's CPU in cores and per request (medians) and its peak memory" do
      doc = lambda do |cpu_s, pss|
        [{ "name" => "postgresql", "version" => "15.18",
           "sample" => { "cpu_user_s" => cpu_s, "cpu_system_s" => 0.0, "duration_s" => 10.0, "pss_peak_bytes" => pss } }]
      end
      records = [ServiceFiguresRecord.new(doc.call(3.8, 40_000_000), 34_000), ServiceFiguresRecord.new(doc.call(4.0, 45_000_000), 40_000),
                 ServiceFiguresRecord.new(doc.call(3.0, 42_000_000), 20_000)]
      entry = Rackbench::Report::ServiceFigures.of(records).first
      assert_equal 3, entry["batches"]
      assert_in_delta 0.38, entry["cpu_cores"]
      assert_in_delta 111.76, entry["cpu_us_per_request"], 0.01, "the median of 111.8, 100 and 150 µs"
      assert_equal 45_000_000, entry["memory_peak_bytes"]
      assert_equal "PostgreSQL 15.18: 38% of a CPU, 111.8us per request, 45.0 MB peak",
                   Rackbench::Report::ServiceFigures.text(entry)
      assert_nil Rackbench::Report::ServiceFigures.of([ServiceFiguresRecord.new(nil, 5)])
    end
  end
end
