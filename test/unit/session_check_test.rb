# frozen_string_literal: true

require "test_helper"
require "json"

# ServerProcess::SessionCheck without a server: the list it replays and
# how it judges the engine's per-entry results (the real run is in
# test/integration/rails_posts_session_test.rb).
describe Rackbench::ServerProcess::SessionCheck do
  check = Rackbench::ServerProcess::SessionCheck

  it "replays the first entries verbatim and in order, then captures the text from the load path" do
    list = <<~LIST
      # a comment
      --- weight=3 name=list
      GET /posts

      --- first name=form
      @capture token form=authenticity_token
      GET /login

      --- name=other first
      @follow
      POST /login

      a={{token:url}}
      --- first
      GET /last
    LIST
    assert_equal <<~WANT, check.check_list(list, "/posts?n=1", "Signed in as a.b (x)")
      --- first name=form
      @capture token form=authenticity_token
      GET /login

      --- name=other first
      @follow
      POST /login

      a={{token:url}}
      --- first
      GET /last
      --- name=session-check
      @capture session_check body regex=(Signed in as a\\.b \\(x\\))
      GET /posts?n=1
    WANT
    assert_equal "--- name=session-check\n@capture session_check body regex=(x)\nGET /\n",
                 check.check_list("--- weight=1\nGET /a\n", "/", "x")
  end

  it "escapes every ERE special character" do
    assert_equal "\\.\\[\\]\\{\\}\\(\\)\\\\\\*\\+\\?\\^\\$\\|a", check.ere_escape(".[]{}()\\*+?^$|a")
  end

  def entry(name, status: {}, errors: {}, requests: status.values.sum)
    { "name" => name, "index" => 0, "requests" => requests, "status" => status,
      "errors" => { "connect" => 0, "capture" => 0 }.merge(errors) }
  end

  def result(*entries) = Struct.new(:entries).new(entries)

  it "passes a login and a page showing the text" do
    ok = result(entry("form", status: { "200" => 1 }), entry("login", status: { "303" => 1, "200" => 1 }),
                entry("session-check", status: { "200" => 9 }))
    assert_nil check.problem(ok, "/posts", "Signed in")
  end

  it "names the first entry that failed, by status or error" do
    refused = result(entry("form", status: { "200" => 1 }), entry("login", status: { "422" => 1 }),
                     entry("session-check", status: { "200" => 3 }))
    assert_equal "first entry login got status 422 x 1", check.problem(refused, "/posts", "x")
    lost = result(entry(nil, errors: { "capture" => 1 }, requests: 0), entry("session-check", status: { "200" => 3 }))
    assert_equal "first entry #0 got capture error x 1", check.problem(lost, "/posts", "x")
    silent = result(entry("login", requests: 0), entry("session-check", status: { "200" => 3 }))
    assert_equal "first entry login got no response", check.problem(silent, "/posts", "x")
  end

  it "says when the page does not show the text, or was never reached" do
    anonymous = result(entry("login", status: { "200" => 1 }),
                       entry("session-check", errors: { "capture" => 4 }, requests: 0))
    assert_equal 'GET /posts after the first entries does not show "Signed in" (4 of 4 pages)',
                 check.problem(anonymous, "/posts", "Signed in")
    unreached = result(entry("login", status: { "200" => 1 }), entry("session-check", requests: 0))
    assert_equal "GET /posts was not reached after the first entries", check.problem(unreached, "/posts", "x")
    timed_out = result(entry("login", status: { "200" => 1 }),
                       entry("session-check", errors: { "timeout" => 1 }, requests: 0))
    assert_equal 'GET /posts was not reached after the first entries ({"timeout"=>1})',
                 check.problem(timed_out, "/posts", "x")
  end

  # An engine that answers each run with the next of results, keeping the settings.
  def engine(*results)
    Struct.new(:results, :settings) do
      def run(settings)
        self.settings << settings
        results.shift
      end
    end.new(results, [])
  end

  it "sends each first entry and the load path once, and waits for each answer, not for a window" do
    Dir.mktmpdir do |dir|
      file = File.join(dir, "list.requests")
      File.write(file, "--- first name=form\nGET /login\n--- first name=login\nPOST /login\n--- weight=1\nGET /\n")
      fine = result(entry("form", status: { "200" => 1 }), entry("login", status: { "303" => 1 }),
                    entry("session-check", status: { "200" => 1 }))
      fake = engine(fine)
      assert_same fine, check.verify!(url: "http://127.0.0.1:9/posts", requests_file: file, expect_body: "x", engine: fake)
      assert_equal 1, fake.settings.size
      settings = fake.settings.first
      assert_equal [3, 1, true], [settings.count, settings.connections, settings.cookies]
      assert settings.count?, "a fixed count of requests ends when each one has its answer"
      refused = engine(result(entry("form", status: { "200" => 1 }), entry("login", status: { "422" => 1 }),
                              entry("session-check", requests: 0)))
      error = assert_raises(Rackbench::SetupError) do
        check.verify!(url: "http://127.0.0.1:9/posts", requests_file: file, expect_body: "x", engine: refused)
      end
      assert_equal "session check failed: first entry login got status 422 x 1", error.message
      assert_equal 1, refused.settings.size, "a refused login is not run again"
    end
  end

  it "gives each request ten times the app's first answer, at least 10 s and the experiment's own timeout" do
    assert_equal 10.0, check.request_timeout_s(nil, nil), "nothing measured: the floor"
    assert_equal 10.0, check.request_timeout_s(0.05, nil), "a fast app keeps the floor"
    assert_equal 65.7, check.request_timeout_s(6.562, nil), "a page compiled on a busy machine: ten times it"
    assert_equal 30.0, check.request_timeout_s(0.05, 30.0), "the experiment's load.timeout raises it"
    assert_equal 65.7, check.request_timeout_s(6.562, 2.0), "a short load.timeout never lowers it"
    Dir.mktmpdir do |dir|
      file = File.join(dir, "list.requests")
      File.write(file, "--- first name=login\nGET /login\n")
      fake = engine(result(entry("login", status: { "200" => 1 }), entry("session-check", status: { "200" => 1 })))
      check.verify!(url: "http://127.0.0.1:9/posts", requests_file: file, expect_body: "x", first_response_s: 4.0,
                    engine: fake)
      assert_equal 40.0, fake.settings.first.timeout_s
    end
  end
end
