# frozen_string_literal: true

require "test_helper"
require "json"
require_relative "../fixtures/fakes"

# A load host (load.host) over a stand-in for ssh (test/fixtures/fake_ssh,
# which runs the remote command here): what RemoteHost asks and how it
# says what failed, the command RemoteEngine sends and how it reads the
# phases and the JSON back, and LoadHosts' check that the load host
# reaches the server. The real ssh, sshd and network are in
# test/integration/load_host_test.rb.
describe Rackbench::RemoteHost do
  FAKE_SSH = File.expand_path("../fixtures/fake_ssh", __dir__)
  ENGINE_RESULT_FILE = File.expand_path("../fixtures/engine_result.json", __dir__)

  let(:dir) { Dir.mktmpdir("rackbench-remote") }
  after { FileUtils.rm_rf(dir) }

  # The fake's own variables go in the ssh command, as a user's would.
  def remote(path = Rackbench::LoadEngine.default_binary, env: {})
    vars = env.map { |name, value| "#{name}=#{value}" }
    Rackbench::RemoteHost.new("ssh://bench@loadgen:2200#{path}",
                              env: { "RACKBENCH_SSH_COMMAND" => ["env", *vars, RbConfig.ruby, FAKE_SSH].join(" ") })
  end

  def script(name, text)
    File.join(dir, name).tap do |path|
      File.write(path, text)
      File.chmod(0o755, path)
    end
  end

  it "parses ssh URLs and refuses anything else" do
    assert_equal ["bench", "loadgen", 2200, "/opt/rb/rackbench-engine"],
                 Rackbench::RemoteHost.parse("ssh://bench@loadgen:2200/opt/rb/rackbench-engine")
    assert_equal [nil, "10.0.0.5", nil, "rackbench-engine"], Rackbench::RemoteHost.parse("ssh://10.0.0.5")
    ["http://loadgen", "ssh://", "ssh://a:secret@loadgen", "loadgen", "ssh://loadgen?x=1"].each do |bad|
      error = assert_raises(ArgumentError) { Rackbench::RemoteHost.parse(bad) }
      assert_match(%r{must be ssh://USER@HOST\[:PORT\]}, error.message)
    end
  end

  it "learns this host's address and the load host's engine in one ssh command" do
    argv_file = File.join(dir, "argv")
    host = remote(env: { "FAKE_SSH_ARGV" => argv_file }).prepare!
    assert_equal "192.0.2.7", host.server_address
    assert_equal `#{Rackbench::LoadEngine.default_binary} --version`.strip, host.engine_version
    argv = File.read(argv_file).lines.map(&:chomp)
    assert_equal ["-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-p", "2200", "bench@loadgen", "--"], argv.first(8)
    assert_equal({ "load_host" => "ssh://bench@loadgen:2200#{Rackbench::LoadEngine.default_binary}",
                   "server_address" => "192.0.2.7", "engine_version" => host.engine_version,
                   "round_trip_us" => { "min" => 1.0 } }, host.to_h({ "min" => 1.0 }))
  end

  it "says in one line that ssh failed, the engine is missing, or is another version" do
    error = assert_raises(Rackbench::SetupError) { remote(env: { "FAKE_SSH_MODE" => "refused" }).prepare! }
    assert_equal "load host ssh://bench@loadgen:2200#{Rackbench::LoadEngine.default_binary}: ssh failed: ssh: connect " \
                 "to host loadgen port 22: Connection refused", error.message
    error = assert_raises(Rackbench::SetupError) { remote("/no/such/rackbench-engine").prepare! }
    assert_match(%r{\Aload host ssh://bench@loadgen:2200/no/such/rackbench-engine: no engine at /no/such/rackbench-engine there .*install rackbench on it}, error.message)
    old = script("old-engine", "#!/bin/sh\necho 'rackbench-engine 0.0.1'\n")
    error = assert_raises(Rackbench::SetupError) { remote(old).prepare! }
    assert_match(/its engine is "rackbench-engine 0.0.1", this host's "rackbench-engine [\d.]+": run the same rackbench on both/,
                 error.message)
  end

  it "runs the engine there: the phases and the JSON back on one stream, the request list on stdin" do
    seen = File.join(dir, "seen")
    engine = script("engine", <<~SH)
      #!/bin/sh
      printf '%s\\n' "$@" > #{seen}.argv
      cat /dev/stdin > #{seen}.stdin
      printf m >&3
      printf e >&3
      cat #{ENGINE_RESULT_FILE}
    SH
    requests = File.join(dir, "requests.txt").tap { |path| File.write(path, "GET /a\nGET /b\n") }
    settings = Rackbench::LoadSettings.build(url: "http://192.0.2.7:8080/", requests_file: requests, duration_s: 1.0,
                                             cpus: [1])
    phases = []
    result = remote(engine).engine.run(settings, on_phase: ->(phase) { phases << phase })
    assert_equal %i[measure end], phases
    assert_equal Fakes::ENGINE_RESULT["requests"], result.requests
    argv = File.read("#{seen}.argv").lines.map(&:chomp)
    assert_equal "/dev/stdin", argv[argv.index("--requests") + 1], "the list is read from the session"
    assert_equal ["--allow-remote", "--phase-fd", "3", "http://192.0.2.7:8080/"], argv.last(4)
    assert_equal ["--cpus", "1"], argv[argv.index("--cpus"), 2]
    assert_equal "GET /a\nGET /b\n", File.read("#{seen}.stdin")
  end

  it "refuses to write a raw CSV there" do
    settings = Rackbench::LoadSettings.build(url: "http://192.0.2.7:8080/", raw_file: File.join(dir, "raw.csv"))
    error = assert_raises(Rackbench::UsageError) { remote.engine.run(settings) }
    assert_match(/not written on a load host/, error.message)
  end
end

describe Rackbench::Trial::Http::LoadHosts do
  # A RemoteHost whose engine answers with +result+ (no ssh).
  class StubRemote
    Server = Struct.new(:host, :port)
    attr_reader :prepared

    def initialize(result)
      @result = result
      @prepared = 0
    end

    def prepare!
      @prepared += 1
      self
    end

    def server_address = "192.0.2.7"
    def engine = self
    def run(_settings, **) = @result
  end

  def config(host)
    Struct.new(:load).new({ host: host })
  end

  it "prepares each load host once, and names a server the load host cannot reach" do
    unreachable = Rackbench::LoadResult.new(Fakes::ENGINE_RESULT.merge(
                                              "requests" => 0, "status" => {}, "errors" => Fakes::ENGINE_RESULT["errors"].merge("connect" => 7)
                                            ))
    stub = StubRemote.new(unreachable)
    hosts = Rackbench::Trial::Http::LoadHosts.new(remote: ->(_url) { stub })
    hosts.prepare!([config("ssh://a"), config("ssh://a"), config(nil)])
    assert_equal 1, stub.prepared
    assert_equal "192.0.2.7", hosts.bind_host(config("ssh://a"))
    assert_equal Rackbench::Servers::HOST, hosts.bind_host(config(nil))
    local = Object.new
    assert_same local, hosts.engine(config(nil), nil, "/", local: local)
    error = assert_raises(Rackbench::SetupError) do
      hosts.engine(config("ssh://a"), StubRemote::Server.new("192.0.2.7", 8080), "/up", local: local)
    end
    assert_equal "load host ssh://a cannot reach the server at 192.0.2.7:8080 (connect errors: 7)", error.message
  end
end

describe "load.host in an experiment file" do
  def parse(load)
    Rackbench::Experiment.parse("name: lh\nservers: [puma]\napps: [rack-hello]\nload: #{load}\n", source: "lh.yml")
  end

  it "is a dimension that keeps older fingerprints when left out or local" do
    plain = parse("{ timeout: 2s }")
    assert_equal plain.fingerprint, parse("{ timeout: 2s, host: local }").fingerprint
    both = parse('{ timeout: 2s, host: [local, "ssh://bench@loadgen/opt/rackbench-engine"] }')
    assert_equal [nil, "ssh://bench@loadgen/opt/rackbench-engine"], both.dimensions["load.host"]
    assert_equal [nil, "ssh://bench@loadgen/opt/rackbench-engine"], both.configurations.map { |c| c.load[:host] }
  end

  it "refuses a URL that is not ssh://, a calibrated timeout and a proxy, naming the key" do
    { '{ timeout: 2s, host: "http://loadgen" }' => /lh.yml: load.host: must be ssh:\/\/USER@HOST/,
      '{ host: "ssh://loadgen" }' => /load.host: needs load.timeout/ }.each do |load, message|
      error = assert_raises(Rackbench::ConfigError) { parse(load) }
      assert_match message, error.message
    end
    error = assert_raises(Rackbench::ConfigError) do
      Rackbench::Experiment.parse("name: lh\nservers: [puma]\napps: [rack-hello]\nproxy: nginx\n" \
                                  "load: { timeout: 2s, host: \"ssh://loadgen\" }\n", source: "lh.yml")
    end
    assert_match(/load.host: cannot be combined with proxy: nginx/, error.message)
  end
end
