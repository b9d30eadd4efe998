# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "tmpdir"

# Every named session is the session served (issues 21 and 25), checked in
# the app's own log as well as in rackbench's counts. The fixture app
# (test/fixtures/apps/session-limit) keeps at most 4 sessions per user and
# logs which user made each request:
#
# * 10 connections logging in as one user: 6 lose their session right
#   after login and browse anonymously, their public pages still 200; the
#   probe every slot sends at the window's edges catches it, and the trial
#   fails naming the lost sessions in every view;
# * 4 connections as one user: every session holds;
# * 10 connections with users drawn from a file (@users): every session
#   holds, each slot is its own user, and every request is made as a
#   logged-in user.
describe "sessions held or lost (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-sessions") }
  let(:app) { File.expand_path("../fixtures/apps/session-limit", __dir__) }

  after { FileUtils.rm_rf(dir) }

  # The app's log lines of a trial: [user, method, path, status].
  def app_log(results, trial)
    slug = Dir.children(File.join(results, "work")).find { |name| name.start_with?(format("%04d-", trial["position"])) }
    File.readlines(File.join(results, "work", slug, "session-app.log"), chomp: true).map(&:split)
  end

  # The pages requested once the first login succeeded (before it, the
  # runner's app check requests the load path anonymously), logins aside.
  def pages_after_login(log)
    first = log.index { |_, method, path, status| method == "POST" && path == "/login" && status == "303" }
    log.drop(first).reject { |_, _, path, _| path == "/login" }
  end

  it "fails the trial whose connections outnumber the user's sessions, and holds every session otherwise" do
    one = File.join(app, "one-user.requests")
    many = File.join(app, "many-users.requests")
    file = File.join(dir, "sessions.yml")
    File.write(file, <<~YAML)
      name: sessions
      batches: 1
      rubies: [ruby]
      servers: [puma]
      apps:
        - { name: session-limit, path: #{app}, health: /up, load_path: /posts/1, expect_body: Post 1,
            expect_session_body: Signed in as, env: { SESSION_LIMIT: "4" } }
      processes: 1
      threads: 4
      load:
        connections: [4, 10]
        requests: [#{one}, #{many}]
        duration: 2s
        warmup: 1s
        timeout: 2s
      exclude:
        - { load.connections: 4, load.requests: #{many} }
    YAML
    results = File.join(dir, "results")
    out, err, status = rackbench("run", file, "--results", results)
    refute status.success?, "a failed trial makes the run exit non-zero: #{out}#{err}"
    json, = rackbench("report", "--results", results, "--json")
    report = JSON.parse(json)
    trials = report.fetch("trials").to_h { |t| [[t["dims"]["load.connections"], File.basename(t["dims"]["load.requests"])], t] }
    assert_equal 3, trials.size, trials.keys.inspect

    # 10 connections as one user: 6 slots lost their session, caught by
    # the probes, named in the reason.
    lost = trials.fetch([10, "one-user.requests"])
    assert_equal "failed", lost["status"]
    assert_match(/\A6 of 10 connection slots lost their session \(failed probes: 6 at the window's start, 6 after its end; /,
                 lost["reason"])
    assert_match(/session-probe: status 200: the body does not contain 'Signed in as'/, lost["reason"])
    # The app's own log: requests by anonymous users beyond the login.
    log = app_log(results, lost)
    anonymous = pages_after_login(log).select { |user, *| user == "-" }
    refute_empty anonymous, "the app logged the lost sessions' anonymous requests"
    assert(log.any? { |user, method, path, _| user == "user01" && method == "POST" && path == "/login" })

    # Every view names the lost sessions.
    config = report["configs"].find { |c| c["dims"]["load.connections"] == 10 && c["dims"]["load.requests"] == one }
    assert(config["flags"].any? { |f| f["kind"] == "failed" && f["message"].include?("6 of 10 connection slots lost their session") })
    text, = rackbench("report", "--results", results, "--wide") # the flag's line whole
    assert_includes text, "6 of 10 connection slots lost their session"
    csv, = rackbench("report", "--results", results, "--csv")
    assert(csv.lines.any? { |line| line.include?("10") && line.include?("failed") }, csv)
    html = File.join(dir, "report.html")
    rackbench("report", "--results", results, "--html", html)
    assert_includes File.read(html), "6 of 10 connection slots lost their session"

    # 4 connections as one user: every session held, every request after
    # the login made as user01.
    held = trials.fetch([4, "one-user.requests"])
    assert_equal "ok", held["status"], held["reason"]
    pages = pages_after_login(app_log(results, held))
    refute_empty pages
    assert_equal ["user01"], pages.map(&:first).uniq, "no anonymous request in the app's log"

    # 10 connections, users from the file: each slot its own user, all held.
    users = trials.fetch([10, "many-users.requests"])
    assert_equal "ok", users["status"], users["reason"]
    log = app_log(results, users)
    pages = pages_after_login(log)
    refute(pages.any? { |user, *| user == "-" }, "every request in the app's log was made as a logged-in user")
    expected = (1..10).map { |i| format("user%02d", i) }
    assert_equal expected, pages.map(&:first).uniq.sort
    logins = log.select { |_, method, path, status| method == "POST" && path == "/login" && status == "303" }
    assert_operator logins.size, :>=, 10
  end
end
