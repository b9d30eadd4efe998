# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "tmpdir"
require "sqlite3"
require_relative "../../apps/rails-posts/posts_db"
require_relative "../support/builtin_app_server"

# rails-posts as a real Rails app has it: forgery protection on, a login
# form, the user on every page. Its mix logs in through the form (token
# captured, 303 followed) and the session check proves the login before
# measuring; without the token the login is refused (422) on both sides:
# the engine's per-entry results and the session check.
describe "rails-posts sessions (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-rails-session") }
  let(:app) { Rackbench::Apps.builtin("mix") }

  after { FileUtils.rm_rf(dir) }

  include BuiltinAppServer

  # Boots rails-posts under Puma as a trial does (bundle, setup, readiness,
  # the app's check) and yields [url of the load path, work directory].
  def with_rails_posts
    with_builtin_app("mix", dir: dir) do |server, work|
      yield "http://127.0.0.1:#{server.port}#{app.load_path}", work
    end
  end

  def run_mix(url, file, **options)
    settings = Rackbench::LoadSettings.build(url: url, connections: 2, duration_s: 1.5, warmup_s: 0.3,
                                             requests_file: file, cookies: true, timeout_s: 10, **options)
    Rackbench::LoadEngine.new.run(settings)
  end

  # Measured and warmup counts of one entry together.
  def counts(entry)
    status = entry["status"].merge(entry["warmup"]["status"]) { |_, a, b| a + b }
    errors = entry["errors"].merge(entry["warmup"]["errors"]) { |_, a, b| a + b }
    [status, errors.select { |_, n| n.positive? }]
  end

  def assert_entries_add_up(result)
    assert_equal result.requests, result.entries.sum { |e| e["requests"] }
    result.status.each { |code, n| assert_equal n, result.entries.sum { |e| e["status"].fetch(code, 0) }, code }
    result.errors.each { |kind, n| assert_equal n, result.entries.sum { |e| e["errors"][kind] }, kind }
    assert_equal result.warmup["requests"], result.entries.sum { |e| e["warmup"]["requests"] }
  end

  it "logs in through the CSRF-protected form, shows the user, and refuses a login without the token" do
    with_rails_posts do |url, work|
      # The session check: the list's login, then the page shows the user.
      check = Rackbench::ServerProcess::SessionCheck.verify!(url: url, requests_file: app.requests,
                                                            expect_body: app.expect_session_body)
      assert_operator check.entries.last["requests"], :>, 0

      result = run_mix(url, app.requests)
      names = result.entries.map { |e| e["name"] }
      assert_equal %w[login-form login list list-json post-42 post-512 post-999 reply-42 reply-512], names
      form_status, form_errors = counts(result.entries[0])
      assert_equal({ "200" => 2 }, form_status)
      assert_empty form_errors
      login_status, login_errors = counts(result.entries[1])
      assert_equal({ "303" => 2, "200" => 2 }, login_status, "each login's 303 followed to /posts")
      assert_empty login_errors
      assert_equal 2, result.entries[1]["hops"] + result.entries[1]["warmup"]["hops"]
      refute(result.status.keys.any? { |code| %w[401 403 422].include?(code) }, result.status.inspect)
      assert_equal 0, result.error_count
      replies = result.entries.select { |e| e["name"].start_with?("reply") }
      assert(replies.all? { |e| e["status"].keys - ["303"] == [] }, replies.map { |e| e["status"] }.inspect)
      assert_entries_add_up(result)
      # The replies were written by the logged-in author.
      db = SQLite3::Database.new(File.join(work, PostsDb::FILE_NAME), readonly: true)
      by_author7 = db.get_first_value("SELECT count(*) FROM replies r JOIN authors a ON a.id = r.author_id " \
                                      "WHERE a.name = 'author7' AND r.id > ?", PostsDb::REPLIES)
      db.close
      assert_equal replies.sum { |e| e["status"].fetch("303", 0) + e["warmup"]["status"].fetch("303", 0) }, by_author7

      # The same mix without the token: Rails refuses the login (422) and
      # the session check says so instead of measuring anonymous pages.
      no_token = File.join(dir, "no-token.requests")
      File.write(no_token, File.read(app.requests)
                               .sub("@capture form_token form=authenticity_token\n", "")
                               .sub("authenticity_token={{form_token:url}}&", ""))
      refused = run_mix(url, no_token)
      login_status, = counts(refused.entries[1])
      assert_equal({ "422" => 2 }, login_status)
      assert_equal 0, refused.entries[1]["hops"]
      # Not logged in: no csrf_token was captured (a 422 has no meta tag),
      # so the replies are never sent blind: capture errors, not requests.
      refused.entries.select { |e| e["name"].start_with?("reply") }.each do |e|
        assert_equal 0, e["requests"]
      end
      assert_entries_add_up(refused)
      error = assert_raises(Rackbench::SetupError) do
        Rackbench::ServerProcess::SessionCheck.verify!(url: url, requests_file: no_token,
                                                       expect_body: app.expect_session_body)
      end
      assert_equal "session check failed: first entry login got status 422 x 1", error.message
    end
  end

  # mix-users: each connection its own author from users.csv, random posts,
  # and a probe per slot at the window's edges that it is still its author.
  it "logs each connection in as its own author (mix-users), every slot proving it at the window's edges" do
    users = Rackbench::Apps.builtin("mix-users")
    with_builtin_app("mix-users", dir: dir) do |server, work|
      url = "http://127.0.0.1:#{server.port}#{users.load_path}"
      check = Rackbench::ServerProcess::SessionCheck.verify!(url: url, requests_file: users.requests,
                                                            expect_body: "Signed in as author1</p>")
      assert_operator check.entries.last["requests"], :>, 0
      result = run_mix(url, users.requests, connections: 4)
      assert_equal 0, result.failed_count, "#{result.errors} #{result.status}"
      assert_equal [4, 0, 0], result.probes["start"].values_at("passed", "failed", "unchecked")
      assert_equal [4, 0, 0], result.probes["end"].values_at("passed", "failed", "unchecked")
      assert_equal({ "count" => 50, "columns" => %w[login password], "slots_per_user_max" => 1 },
                   result.users.slice("count", "columns", "slots_per_user_max"))
      posts = result.entries.find { |e| e["name"] == "post" }
      assert_operator posts["requests"], :>, 0
      assert_equal [4, 4, 0], result.service["connections"].values_at("active", "served", "unserved")
      # The replies in the database were written by the four slots' authors.
      db = SQLite3::Database.new(File.join(work, PostsDb::FILE_NAME), readonly: true)
      authors = db.execute("SELECT DISTINCT a.name FROM replies r JOIN authors a ON a.id = r.author_id " \
                           "WHERE r.id > ?", PostsDb::REPLIES).flatten
      db.close
      assert_empty authors - %w[author1 author2 author3 author4], authors.inspect
    end
  end

  it "fails the session check when the page does not show the expected user" do
    with_rails_posts do |url, _work|
      error = assert_raises(Rackbench::SetupError) do
        Rackbench::ServerProcess::SessionCheck.verify!(url: url, requests_file: app.requests,
                                                       expect_body: "Signed in as author8")
      end
      assert_match(/\Asession check failed: GET \/posts after the first entries does not show "Signed in as author8" \(\d+ of \d+ pages\)\z/,
                   error.message)
    end
  end
end
