# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require_relative "../fixtures/session_server"

# The load engine's browser-like sessions (doc/requests.md: captures,
# variables, redirects, preset headers and cookies) against a server that
# checks a per-session form token and counts what it saw.
describe "load engine sessions" do
  before { require_engine! }

  def run_list(server, text, connections: 3, duration_s: 0.5, on_phase: nil, **options)
    Dir.mktmpdir do |dir|
      file = File.join(dir, "requests.txt")
      File.write(file, text)
      settings = Rackbench::LoadSettings.build(url: server.url, connections: connections, duration_s: duration_s,
                                               requests_file: file, cookies: true, **options)
      Rackbench::LoadEngine.new.run(settings, on_phase: on_phase)
    end
  end

  # A fixed count's run of text, and what the server had answered in all
  # at each of the window's edges (the engine holds there until the
  # callback returned, --hold-fd): { measure: n, end: n }.
  def run_count(server, text, count:, warmup_count:, **options)
    answered = {}
    on_phase = ->(phase) { answered[phase] = server.requests_by_path.values.sum }
    result = run_list(server, text, count: count, warmup_count: warmup_count, on_phase: on_phase, **options)
    [result, answered]
  end

  def entry(result, name) = result.entries.find { |e| e["name"] == name }

  # Per-entry counts add up exactly to the totals, measured and warmup.
  def assert_entries_add_up(result)
    assert_equal result.requests, result.entries.sum { |e| e["requests"] }
    result.status.each { |code, n| assert_equal n, result.entries.sum { |e| e["status"].fetch(code, 0) }, code }
    result.errors.each { |kind, n| assert_equal n, result.entries.sum { |e| e["errors"][kind] }, kind }
    assert_equal result.warmup["requests"], result.entries.sum { |e| e["warmup"]["requests"] }
    result.warmup["errors"].each { |kind, n| assert_equal n, result.entries.sum { |e| e["warmup"]["errors"][kind] } }
  end

  login = File.read(File.expand_path("../fixtures/requests/session_login.txt", __dir__))

  it "logs every slot in through the form: token captured, URL-encoded, 303 followed to the signed-in page" do
    Rackbench::Test::SessionServer.open do |server|
      result = run_list(server, login)
      assert_equal 3, server.logins_ok
      assert_equal 0, server.logins_rejected
      form = entry(result, "login-form")
      assert_equal({ "200" => 3 }, form["status"])
      step = entry(result, "login")
      assert_equal({ "303" => 3, "200" => 3 }, step["status"], "each login's 303 followed to a 200")
      assert_equal [6, 3], step.values_at("requests", "hops")
      assert_equal 3, step["histogram"]["total"], "one latency per login, its redirect included"
      assert_equal 3, server.requests_by_path["GET /home"] - entry(result, "home")["requests"]
      # home captured the user from the page: echo, which needs it, was
      # only held back before the first home page of its slot.
      assert_operator entry(result, "home")["requests"], :>, 20
      assert_equal 0, entry(result, "home")["errors"]["capture"]
      assert_equal server.requests_by_path["GET /echo"], entry(result, "echo")["requests"]
      assert_operator entry(result, "echo")["errors"]["capture"], :<=, 3
      refute(result.status.keys.any? { |code| %w[422 403].include?(code) })
      assert_entries_add_up(result)
    end
  end

  it "logs in over TLS: the jar's cookie, the token and the 303 to an absolute https:// Location" do
    Dir.mktmpdir do |dir|
      cert = Rackbench::Tls.certificate(dir)
      Rackbench::Test::SessionServer.open(tls: cert) do |server|
        result = run_list(server, login, ca_file: cert.ca_path)
        assert_equal [3, 0], [server.logins_ok, server.logins_rejected]
        assert_equal({ "303" => 3, "200" => 3 }, entry(result, "login")["status"], "the https:// Location was followed")
        assert_equal 0, entry(result, "login")["errors"]["redirect"]
        assert_operator entry(result, "home")["requests"], :>, 5
        assert_equal 0, entry(result, "home")["errors"]["capture"], "every slot stayed signed in over TLS"
        assert_equal 0, result.errors["tls"]
        assert_equal 3, result.tls["handshakes"] + result.tls["warmup"]["handshakes"]
        assert_entries_add_up(result)
      end
    end
  end

  it "gets 422 on the login without the token capture, and counts a capture that finds nothing" do
    Rackbench::Test::SessionServer.open do |server|
      no_token = login.sub("@capture token form=authenticity_token\n", "")
                      .sub("authenticity_token={{token:url}}&", "authenticity_token=&")
      result = run_list(server, no_token)
      assert_equal 0, server.logins_ok
      assert_equal 3, server.logins_rejected
      assert_equal({ "422" => 3 }, entry(result, "login")["status"])
      assert_equal 0, entry(result, "login")["hops"]
      # Not signed in: home's capture of the user finds nothing on any page.
      home = entry(result, "home")
      assert_empty home["status"]
      assert_equal server.requests_by_path["GET /home"], home["errors"]["capture"]
      # echo needs the user's name: never sent, every one a capture error.
      assert_equal 0, server.requests_by_path["GET /echo"]
      assert_operator entry(result, "echo")["errors"]["capture"], :>, 0
      assert_equal 0, entry(result, "echo")["requests"]
      assert_entries_add_up(result)
    end
  end

  it "follows relative redirects, refuses other origins and stops after five hops" do
    Rackbench::Test::SessionServer.open do |server|
      result = run_list(server, <<~LIST, connections: 2)
        --- name=away
        @follow
        GET /away

        --- name=loop
        @follow
        GET /loop

        --- name=relative
        @follow
        GET /relative/a

        --- name=plain
        GET /away
      LIST
      away = entry(result, "away")
      assert_operator away["errors"]["redirect"], :>, 0
      assert_equal [0, {}], away.values_at("requests", "status")
      loop_entry = entry(result, "loop")
      chains = loop_entry["errors"]["redirect"]
      assert_operator chains, :>, 0
      # Each chain: the first 302 and the 302s of four hops counted, the
      # fifth hop's 302 (a sixth redirect) an error; five hops sent. The
      # drain finishes every chain started.
      assert_equal 5 * chains, loop_entry["requests"]
      assert_equal 5 * chains, loop_entry["hops"]
      assert_equal 6 * chains, server.requests_by_path["GET /loop"]
      relative = entry(result, "relative")
      assert_equal relative["hops"], relative["status"]["200"]
      assert_equal relative["status"]["302"], relative["status"]["200"]
      assert_equal server.requests_by_path["GET /relative/b"], relative["status"]["200"]
      # Without @follow a redirect is an ordinary response.
      plain = entry(result, "plain")
      assert_equal({ "302" => plain["requests"] }, plain["status"])
      assert_equal 0, plain["errors"].values.sum
      assert_entries_add_up(result)
    end
  end

  probe = "--- probe name=whoami\n@expect status=200\n@expect body=Signed in as\nGET /home\n"

  it "proves every slot's session at the window's edges, probes counted apart from the window" do
    Rackbench::Test::SessionServer.open do |server|
      result = run_list(server, "#{login}\n#{probe}", warmup_s: 0.2)
      assert_equal({ "entries" => [{ "index" => 4, "name" => "whoami" }], "slots" => 3 },
                   result.probes.slice("entries", "slots"))
      %w[start end].each do |point|
        assert_equal [3, 0, 0, [], nil], result.probes[point].values_at("passed", "failed", "unchecked", "failed_slots",
                                                                         "reason"), point
      end
      refute(result.entries.any? { |e| e["name"] == "whoami" }, "a probe is no entry of the mix")
      # The server saw each slot's login hop, its home pages and its two probes.
      home = entry(result, "home")
      assert_equal 3 + 6, server.requests_by_path["GET /home"] - home["requests"] - home["warmup"]["requests"]
      assert_entries_add_up(result)
      assert_equal [3, 3, 3, 0], result.service["connections"].values_at("slots", "active", "served", "unserved")
    end
  end

  it "fails the probes and counts @expect errors when the slots are not signed in" do
    Rackbench::Test::SessionServer.open do |server|
      no_token = login.sub("@capture token form=authenticity_token\n", "")
                      .sub("authenticity_token={{token:url}}&", "authenticity_token=&")
                      .sub("@capture who body regex=Signed in as ([a-z0-9]+)\n", "@expect body=Signed in as\n")
                      .sub("GET /echo?who={{who}}", "GET /echo")
      result = run_list(server, "#{no_token}\n#{probe}", warmup_s: 0.2)
      %w[start end].each do |point|
        assert_equal [0, 3, [0, 1, 2]], result.probes[point].values_at("passed", "failed", "failed_slots"), point
        assert_equal "slot 0: whoami: status 200: the body does not contain 'Signed in as'", result.probes[point]["reason"]
      end
      home = entry(result, "home")
      assert_empty home["status"], "a page without the user is no 200 success"
      assert_operator home["errors"]["expect"], :>, 0
      assert_equal home["errors"]["expect"], result.errors["expect"]
      assert_operator entry(result, "echo")["status"].fetch("200", 0), :>, 0, "an entry without @expect: any 2xx"
      assert_entries_add_up(result)
      assert_match(/\A3 of 3 connection slots lost their session/, Rackbench::RequestList.lost_sessions(result.probes))
    end
  end

  # A fixed count's probes (count_window.h): each slot's start probe once
  # the warmup is over, its end probe once the window closed; the window
  # itself exactly N requests of the mix, both edges quiet.
  it "sends a fixed count's probes outside its window: exactly N requests between the edges" do
    Rackbench::Test::SessionServer.open do |server|
      result, answered = run_count(server, "#{login}\n#{probe}", count: 150, warmup_count: 20)
      %w[start end].each do |point|
        assert_equal [3, 0, 0, [], nil], result.probes[point].values_at("passed", "failed", "unchecked", "failed_slots",
                                                                         "reason"), point
      end
      # Each of the N tickets ended once: a response, or an echo held back
      # (never sent) before its slot's first home page gave it the user.
      assert_equal 150, result.requests + result.error_count
      assert_equal result.error_count, result.errors["capture"]
      assert_operator result.error_count, :<=, 3
      assert_equal result.requests, result.entries.sum { |e| e["requests"] }
      assert_equal 0, result.entries.sum { |e| e["hops"].to_i }, "every login done before the window"
      warmup = result.entries.sum { |e| e["warmup"]["requests"] }
      # At the window's start the server had answered the warmup (the
      # logins it left unfinished among them) and the three start probes,
      # nothing more; at its end the window's requests, no end probe yet;
      # the three end probes came after.
      assert_equal warmup + 3, answered[:measure]
      assert_equal result.requests, answered[:end] - answered[:measure]
      assert_equal 3, server.requests_by_path.values.sum - answered[:end]
      home = entry(result, "home")
      assert_equal 6, server.requests_by_path["GET /home"] - home["requests"] - home["warmup"]["requests"] - 3,
                   "the probes (and the logins' hops to /home) counted in no entry"
      assert_equal 0, result.probes["start"]["unchecked"]
      assert_entries_add_up(result)
    end
  end

  it "reports a slot whose session the server dropped in a fixed count's window as lost" do
    # The server's 60th answer: past the warmup's 20 requests, 3 login
    # hops and 3 start probes, well before the window's 150 are done.
    Rackbench::Test::SessionServer.open(drop_session_at: 60) do |server|
      result, answered = run_count(server, "#{login}\n#{probe}", count: 150, warmup_count: 20)
      assert_operator answered[:measure], :<, 60, "dropped inside the window"
      assert_operator answered[:end], :>=, 60
      assert_equal [3, 0], result.probes["start"].values_at("passed", "failed")
      passed, failed, slots, reason = result.probes["end"].values_at("passed", "failed", "failed_slots", "reason")
      assert_equal [2, 1, 1], [passed, failed, slots.size]
      assert_equal "slot #{slots.first}: whoami: status 200: the body does not contain 'Signed in as'", reason
      # Each of the N tickets ended once, as a response or an error: the
      # logged-out slot's pages fail their capture of the user.
      assert_equal 150, result.requests + result.error_count
      assert_operator result.errors["capture"], :>, 0
      assert_match(/\A1 of 3 connection slots lost their session \(failed probes: 0 at the window's start, 1 after its end; slots #{slots.first}\)/,
                   Rackbench::RequestList.lost_sessions(result.probes))
    end
  end

  it "sends only the end probe in open loop, outside the schedule" do
    Rackbench::Test::SessionServer.open do |server|
      result = run_list(server, "#{login}\n#{probe}", connections: 2, duration_s: 0.5, rate: 100, warmup_s: 0.2)
      assert_equal [0, 0, 2], result.probes["start"].values_at("passed", "failed", "unchecked")
      # A slot the schedule never needed never logged in: unchecked, not lost.
      passed, failed, unchecked = result.probes["end"].values_at("passed", "failed", "unchecked")
      assert_equal [0, 2], [failed, passed + unchecked]
      assert_operator passed, :>=, 1
      assert_equal passed, entry(result, "login-form")["requests"] + entry(result, "login-form")["warmup"]["requests"]
      hops = result.entries.sum { |e| e["hops"] }
      assert_equal result.late["scheduled"], result.requests + result.error_count + result.unsent - hops
    end
  end

  it "accounts for every scheduled request in open loop, hops sent beyond the schedule" do
    Rackbench::Test::SessionServer.open do |server|
      result = run_list(server, "--- name=relative\n@follow\nGET /relative/a\n\n--- name=home\nGET /home\n",
                        connections: 2, duration_s: 0.5, rate: 200)
      hops = result.entries.sum { |e| e["hops"] }
      assert_operator hops, :>, 10
      assert_equal result.late["scheduled"], result.requests + result.error_count + result.unsent - hops
    end
  end

  it "sends preset headers and cookies with every request, and nothing when none are set" do
    Rackbench::Test::SessionServer.open do |server|
      echo = "---\nGET /echo\n"
      run_list(server, echo, connections: 2, duration_s: 0.3, headers: ["X-Tenant: acme"],
                             cookie_presets: ["theme=dark", "consent=yes"])
      seen = server.echoes
      refute_empty seen
      assert(seen.all? { |h| h["x-tenant"] == "acme" })
      assert(seen.all? { |h| h["cookie"] == "theme=dark; consent=yes" })
    end
    Rackbench::Test::SessionServer.open do |server|
      run_list(server, "---\nGET /echo\n", connections: 2, duration_s: 0.3)
      seen = server.echoes
      refute_empty seen
      assert(seen.none? { |h| h.key?("x-tenant") || h.key?("cookie") })
    end
  end

  it "keeps a preset cookie beside the ones the server sets" do
    Rackbench::Test::SessionServer.open do |server|
      result = run_list(server, "--- first\nGET /login\n\n---\nGET /echo\n", connections: 1, duration_s: 0.3,
                                                                              cookie_presets: ["theme=dark"])
      assert_operator result.requests, :>, 2
      assert(server.echoes.all? { |h| h["cookie"] == "theme=dark; sid=1" }, server.echoes.first.inspect)
    end
  end

  it "has no entries for a single URL" do
    Rackbench::Test::SessionServer.open do |server|
      settings = Rackbench::LoadSettings.build(url: "#{server.url}home", connections: 1, duration_s: 0.2)
      result = Rackbench::LoadEngine.new.run(settings)
      assert_nil result.entries
      assert_operator result.requests, :>, 0
      assert_equal({ "capture" => 0, "redirect" => 0 }, result.errors.slice("capture", "redirect"))
    end
  end
end
