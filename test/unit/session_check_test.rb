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
    slow = result(entry("login", status: { "200" => 1 }), entry("session-check", errors: { "timeout" => 0 }, requests: 0))
    assert_equal "GET /posts was not reached after the first entries ({}, in 32 s)", check.problem(slow, "/posts", "x")
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

  it "runs again for longer when the login took the whole run, and fails only past the longest" do
    Dir.mktmpdir do |dir|
      file = File.join(dir, "list.requests")
      File.write(file, "--- first name=login\nGET /login\n")
      slow = result(entry("login", status: { "200" => 1 }), entry("session-check", requests: 0))
      fine = result(entry("login", status: { "200" => 1 }), entry("session-check", status: { "200" => 2 }))
      fake = engine(slow, slow, fine)
      assert_same fine, check.verify!(url: "http://127.0.0.1:9/posts", requests_file: file, expect_body: "x", engine: fake)
      assert_equal [2.0, 8.0, 32.0], fake.settings.map(&:duration_s)

      never = engine(slow, slow, slow)
      error = assert_raises(Rackbench::SetupError) do
        check.verify!(url: "http://127.0.0.1:9/posts", requests_file: file, expect_body: "x", engine: never)
      end
      assert_equal "session check failed: GET /posts was not reached after the first entries ({}, in 32 s)", error.message
      refused = engine(result(entry("login", status: { "422" => 1 }), entry("session-check", requests: 0)))
      assert_raises(Rackbench::SetupError) do
        check.verify!(url: "http://127.0.0.1:9/posts", requests_file: file, expect_body: "x", engine: refused)
      end
      assert_equal 1, refused.settings.size, "a refused login is not run again"
    end
  end
end
