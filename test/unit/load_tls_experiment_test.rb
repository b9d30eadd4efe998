# frozen_string_literal: true

require "test_helper"
require "json"
require "openssl"
require "stringio"
require_relative "../fixtures/fakes"
require_relative "../support/report_store"

# load.tls on the runner's side: the experiment keys, the certificate
# rackbench makes, the servers that take it (and the reasons of those that
# do not), the trial's engine settings, a failed TLS trial's reason, and
# the report's TLS columns. Puma and Falcon really serving TLS trials is
# test/integration/tls_trials_test.rb.
describe "load.tls" do
  let(:dir) { Dir.mktmpdir("rackbench-tls") }
  after { FileUtils.rm_rf(dir) }

  # One certificate for the file (RSA keys take a moment to make), copied
  # where a test needs one: a results directory's tls/ is used as it is.
  SHARED_TLS_DIR = Dir.mktmpdir("rackbench-tls-shared")
  Minitest.after_run { FileUtils.rm_rf(SHARED_TLS_DIR) }

  def shared_certificate(into)
    FileUtils.mkdir_p(into)
    source = Rackbench::Tls.certificate(SHARED_TLS_DIR)
    FileUtils.cp(Dir[File.join(source.dir, "*")], into, preserve: true)
    Rackbench::Tls.certificate(into)
  end

  def parse(load, servers: "[puma]")
    Rackbench::Experiment.parse(<<~YAML, source: "tls.yml", base_dir: dir)
      name: tls
      rubies: [ruby]
      servers: #{servers}
      apps: [rack-hello]
      load: #{load}
    YAML
  end

  describe "experiment keys" do
    it "is a dimension like any load key, off unless told, and out of the fingerprint when off" do
      exp = parse("{ tls: [false, true], duration: 1s }")
      assert_equal [false, true], exp.configurations.map { |c| c.load[:tls] }
      assert_equal [false, true], exp.configurations.map { |c| c.dims["load.tls"] }
      assert_equal [true, true], exp.configurations.map { |c| c.load[:tls_resume] }
      plain = parse("{ duration: 1s }")
      refute plain.configurations.first.load[:tls]
      refute plain.configurations.first.dims.key?("load.tls")
      assert_equal plain.fingerprint, parse("{ duration: 1s, tls: false, tls_resume: true }").fingerprint,
                   "an experiment stored before TLS is still recognised by --resume"
      refute_equal plain.fingerprint, parse("{ duration: 1s, tls: true }").fingerprint
    end

    it "names what does not go together" do
      {
        "{ tls: yes please }" => /load.tls/,
        "{ protocol: h2 }" => /load.protocol: h2 is HTTP\/2 over TLS: it needs load.tls true/,
        "{ protocol: h2c, tls: true }" => /load.protocol: h2c is HTTP\/2 over cleartext: with load.tls true use h2/,
        "{ tls_resume: false }" => /load.tls_resume: false needs load.tls true/,
        "{ protocol: h2, tls: true, keepalive: false }" => /load.keepalive: false cannot be combined with load.protocol h2/
      }.each do |load, pattern|
        error = assert_raises(Rackbench::ConfigError, load) { parse(load) }
        assert_match pattern, error.message
      end
      assert_equal "h2", parse("{ protocol: h2, tls: true, streams: 4 }").configurations.first.load[:protocol]
    end
  end

  describe Rackbench::Tls do
    it "makes an authority and a server certificate for 127.0.0.1, keys readable by their owner only" do
      cert = Rackbench::Tls.certificate(File.join(dir, "tls"))
      ca = OpenSSL::X509::Certificate.new(File.read(cert.ca_path))
      leaf = OpenSSL::X509::Certificate.new(File.read(cert.cert_path))
      store = OpenSSL::X509::Store.new
      store.add_cert(ca)
      assert store.verify(leaf), store.error_string
      assert OpenSSL::SSL.verify_certificate_identity(leaf, "127.0.0.1")
      assert OpenSSL::SSL.verify_certificate_identity(leaf, "localhost")
      refute OpenSSL::SSL.verify_certificate_identity(leaf, "127.0.0.2")
      assert_kind_of OpenSSL::PKey::RSA, OpenSSL::PKey.read(File.read(cert.key_path)), "what Falcon's loader reads"
      assert_equal 0o600, File.stat(cert.key_path).mode & 0o777
      assert_equal 0o600, File.stat(cert.ca_key_path).mode & 0o777
      assert_match(/\A\h{64}\z/, cert.fingerprint)
    end

    it "keeps a certificate that is still good, and makes a new one near its end or when broken" do
      cert = shared_certificate(dir)
      first = cert.fingerprint
      assert_equal first, Rackbench::Tls.certificate(dir).fingerprint, "a resumed run serves the same certificate"
      File.write(cert.key_path, "garbage")
      refute_equal first, (second = Rackbench::Tls.certificate(dir).fingerprint)
      leaf = OpenSSL::X509::Certificate.new(File.read(cert.cert_path))
      leaf.not_after = Time.now + 3600 # an hour left: less than a run may take
      leaf.sign(OpenSSL::PKey.read(File.read(cert.ca_key_path)), OpenSSL::Digest.new("SHA256"))
      File.write(cert.cert_path, leaf.to_pem)
      refute_equal second, Rackbench::Tls.certificate(dir).fingerprint
    end

    it "says where it could not write" do
      File.write(File.join(dir, "file"), "")
      error = assert_raises(Rackbench::SetupError) { Rackbench::Tls.certificate(File.join(dir, "file", "tls")) }
      assert_match(/cannot write the TLS certificate into .*file\/tls/, error.message)
    end
  end

  describe "servers" do
    let(:cert) { shared_certificate(File.join(dir, "tls")) }

    it "binds puma with ssl_bind: the paths encoded, the backlog kept" do
      argv = Rackbench::Servers.fetch("puma").command(config_ru: "config.ru", port: 9292, processes: 1, threads: 2,
                                                      work_dir: dir, options: { "backlog" => 64 }, tls: cert)
      bind = argv[argv.index("--bind") + 1]
      uri = URI(bind)
      assert_equal %w[ssl 127.0.0.1 9292], [uri.scheme, uri.host, uri.port.to_s]
      params = URI.decode_www_form(uri.query).to_h
      assert_equal({ "key" => cert.key_path, "cert" => cert.cert_path, "verify_mode" => "none", "backlog" => "64" }, params)
      plain = Rackbench::Servers.fetch("puma").command(config_ru: "config.ru", port: 9292, processes: 1, threads: 2,
                                                       work_dir: dir)
      assert_equal "tcp://127.0.0.1:9292", plain[plain.index("--bind") + 1]
    end

    it "binds falcon to https:// and puts the certificate where its loader looks" do
      falcon = Rackbench::Servers.fetch("falcon")
      argv = falcon.command(config_ru: "config.ru", port: 9292, processes: 1, threads: 1, tls: cert)
      assert_equal "https://127.0.0.1:9292", argv[argv.index("--bind") + 1]
      env = falcon.tls_env(cert, dir)
      state = File.join(env.fetch("XDG_STATE_HOME"), "localhost.rb")
      assert_equal File.read(cert.cert_path), File.read(File.join(state, "127.0.0.1.crt"))
      assert_equal File.read(cert.key_path), File.read(File.join(state, "127.0.0.1.key"))
      assert_equal File.read(cert.ca_path), File.read(File.join(state, "development.crt"))
      assert_equal File.read(cert.ca_key_path), File.read(File.join(state, "development.key"))
    end

    it "starts thin with its --ssl flags and the run's certificate, and plain without" do
      thin = Rackbench::Servers.fetch("thin")
      argv = thin.command(config_ru: "config.ru", port: 9292, processes: 1, threads: 1, work_dir: dir, tls: cert)
      assert_equal ["--ssl", "--ssl-key-file", cert.key_path, "--ssl-cert-file", cert.cert_path, "--ssl-disable-verify"],
                   argv[argv.index("--ssl"), 6]
      refute_includes thin.command(config_ru: "config.ru", port: 9292, processes: 1, threads: 1, work_dir: dir), "--ssl"
    end

    it "boots webrick with its own TLS on the run's certificate and key, and without it when load.tls is off" do
      webrick = Rackbench::Servers.fetch("webrick")
      script = File.read(webrick.command(config_ru: "config.ru", port: 9292, processes: 1, threads: 2, work_dir: dir,
                                         tls: cert).first)
      assert_includes script, %(require "webrick/https")
      assert_includes script, "SSLEnable: true"
      assert_includes script, "OpenSSL::X509::Certificate.new(File.read(#{cert.cert_path.inspect}))"
      assert_includes script, "OpenSSL::PKey.read(File.read(#{cert.key_path.inspect}))"
      plain = File.read(webrick.command(config_ru: "config.ru", port: 9292, processes: 1, threads: 2, work_dir: dir).first)
      refute_includes plain, "SSLEnable"
    end

    it "lets falcon, puma, thin and webrick serve TLS, h2 only on falcon, and says why for the others" do
      assert_equal %w[falcon puma thin webrick], Rackbench::Servers.tls_capable
      assert_nil Rackbench::Servers.fetch("falcon").protocol_reason("h2", tls: true)
      assert_equal "puma does not serve h2 over TLS (it serves http1 over TLS); load.protocol h2 needs a server " \
                   "that does, e.g. falcon", Rackbench::Servers.fetch("puma").protocol_reason("h2", tls: true)
      %w[thin webrick].each do |name|
        assert_match(/\A#{name} does not serve h2 over TLS \(it serves http1 over TLS\)/,
                     Rackbench::Servers.fetch(name).protocol_reason("h2", tls: true))
      end
      (Rackbench::Servers.names - %w[falcon puma thin webrick]).each do |name|
        assert_equal "#{name}: rackbench does not start it with TLS (load.tls needs a server that terminates TLS " \
                     "itself: falcon, puma, thin, webrick)", Rackbench::Servers.fetch(name).tls_reason
      end
    end
  end

  describe "trials" do
    let(:install) { Fakes.install(jit: []) }

    def runner(text, engine, launcher: Fakes::Launcher.new)
      shared_certificate(File.join(dir, "tls"))
      exp = Rackbench::Experiment.parse(text, source: "tls.yml", base_dir: dir)
      Rackbench::Runner.new(source: exp, results_dir: dir, out: StringIO.new, err: StringIO.new, installs: [install],
                            layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                            environment: {}, stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" },
                            collaborators: { engine: engine, launcher: launcher, bundles: Fakes::Bundles.new,
                                             companions: Fakes.companions },
                            watchdog: Fakes::Watchdog.new)
    end

    def text(servers: "[puma, unicorn]", load: "tls: true")
      <<~YAML
        name: tls
        rubies: [ruby]
        servers: #{servers}
        apps: [rack-hello]
        load: { #{load}, duration: 0.1s, warmup: 0s, connections: 2, timeout: 2s }
      YAML
    end

    it "leaves servers without TLS out with the reason, and runs the rest over https with the run's authority" do
      engine = Fakes::Engine.new
      launcher = Fakes::Launcher.new
      run = runner(text, engine, launcher: launcher)
      assert_equal ["unicorn: rackbench does not start it with TLS (load.tls needs a server that terminates TLS " \
                    "itself: falcon, puma, thin, webrick)"], run.plan.skipped.map(&:reason)
      run.run
      settings = engine.settings.first
      assert_match %r{\Ahttps://127\.0\.0\.1:\d+/\z}, settings.url
      assert_equal File.join(dir, "tls", "ca.pem"), settings.ca_file
      refute settings.insecure, "rackbench's own certificate is checked, not trusted blindly"
      tls = launcher.launches.first.fetch(:tls)
      assert_equal File.join(dir, "tls"), tls.dir
      assert File.file?(tls.key_path)
    end

    it "compares TLS with plain HTTP in one experiment, and passes tls_resume" do
      engine = Fakes::Engine.new
      launcher = Fakes::Launcher.new
      runner(text(servers: "[puma]", load: "tls: [false, true]"), engine, launcher: launcher).run
      by_scheme = engine.settings.group_by { |s| URI(s.url).scheme }
      assert_equal [[nil, true]], by_scheme.fetch("http").map { |s| [s.ca_file, s.tls_resume] }
      assert_equal [true], by_scheme.fetch("https").map(&:tls_resume)
      assert_equal [false, true], launcher.launches.map { |l| !l[:tls].nil? }.sort_by { |t| t ? 1 : 0 }

      engine = Fakes::Engine.new
      FileUtils.rm_rf(Dir.glob(File.join(dir, "*.db*")))
      runner(text(servers: "[puma]", load: "tls: true, tls_resume: false, keepalive: false").sub("name: tls", "name: t2"),
             engine).run
      assert_equal [[false, false]], engine.settings.map { |s| [s.tls_resume, s.keepalive] }
    end

    it "refuses load.tls behind a proxy, and h2 on a server that only speaks http/1.1 over TLS" do
      run = runner(text(servers: "[puma]", load: "tls: true, protocol: [http1, h2]").sub("apps:", "proxy: [nginx]\napps:"),
                   Fakes::Engine.new)
      assert_equal ["load.tls with a proxy in front is not supported yet (nginx would terminate TLS)"],
                   run.plan.skipped.map(&:reason).uniq
      run = runner(text(servers: "[puma]", load: "tls: true, protocol: [http1, h2]"), Fakes::Engine.new)
      assert_equal ["puma does not serve h2 over TLS (it serves http1 over TLS); load.protocol h2 needs a server " \
                    "that does, e.g. falcon"], run.plan.skipped.map(&:reason)
    end

    it "fails a trial whose every connection failed its TLS, with the reason" do
      doc = JSON.parse(File.read(File.expand_path("../fixtures/engine_result_tls.json", __dir__)))
      doc.merge!("requests" => 0, "rps" => 0.0, "status" => {})
      doc["errors"]["tls"] = 40
      doc["tls"]["failures"]["verify"] = 40
      doc["tls"]["reason"] = "the server's certificate did not check out: self-signed certificate"
      runner(text(servers: "[puma]"), Fakes::Engine.new(result: doc)).run
      reasons = Rackbench::Store.open(dir, &:trials).map(&:reason)
      assert_equal ["TLS failed: the server's certificate did not check out: self-signed certificate"], reasons
    end
  end

  describe "report" do
    it "shows a full and a resumed handshake's time and the share of responses that paid one, only with TLS" do
      report = Rackbench::Store.open(dir) do |store|
        ReportStore.fill(store, { ReportStore.dims(ruby: "a") => [50, 51, 49], ReportStore.dims(ruby: "b") => [40, 41, 39] },
                         fields: lambda { |dims, _, engine|
                           dims["ruby"] == "b" ? { result: engine.merge("tls" => ReportStore.tls_document) } : {}
                         })
        Rackbench::Report.new(store)
      end
      plain, tls = report.to_h["configs"]
      assert_equal [nil, nil, nil], plain.values_at("tls_handshake_us", "tls_resumed_handshake_us", "tls_handshake_share")
      assert_equal [2000.0, 500.0, 0.1], tls.values_at("tls_handshake_us", "tls_resumed_handshake_us", "tls_handshake_share")
      terminal = Rackbench::Report::Terminal.new(report).render
      assert_match(/\| TLS hs +\| paid hs \|/, terminal)
      assert_match(/\| +2\.00ms \| +10\.0% \|/, terminal)
      csv = CSV.parse(Rackbench::Report::Csv.new(report).render)
      # The TLS columns, then differing_gems (written after them).
      at = csv.first.index("tls_handshake_us")
      assert_equal %w[tls_handshake_us tls_resumed_handshake_us tls_handshake_share differing_gems], csv.first[at, 4]
      assert_equal ["2000.0", "500.0", "0.1"], csv[2][at, 3]

      Rackbench::Store.open(File.join(dir, "plain")) do |store|
        ReportStore.fill(store, { ReportStore.dims(ruby: "a") => [50, 51, 49] })
        refute_match(/TLS hs/, Rackbench::Report::Terminal.new(Rackbench::Report.new(store)).render)
      end
    end
  end
end
