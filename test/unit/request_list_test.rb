# frozen_string_literal: true

require "test_helper"
require "tmpdir"

# The request list a trial hands the engine: a session probe added when the
# app names its logged-in text, @users made absolute in the copy, and the
# lost sessions of a result turned into the trial's failure reason.
describe Rackbench::RequestList do
  let(:dir) { Dir.mktmpdir }
  after { FileUtils.rm_rf(dir) }

  def list(text)
    File.join(dir, "app", "mix.requests").tap do |path|
      FileUtils.mkdir_p(File.dirname(path))
      File.write(path, text)
    end
  end

  it "adds one probe entry to the trial's copy, with @users made absolute" do
    source = list("@users users.csv\n--- first name=login\nPOST /login\n\nuser={{user.login}}\n--- name=home\nGET /")
    copy = Rackbench::RequestList.for_trial(source, dir: File.join(dir, "trial"), probe_path: "/posts",
                                                    probe_body: "Signed in as")
    assert_equal File.join(dir, "trial", "requests.list"), copy
    assert_equal "@users #{File.join(dir, "app", "users.csv")}\n--- first name=login\nPOST /login\n\n" \
                 "user={{user.login}}\n--- name=home\nGET /\n\n--- probe name=session-probe\n@expect status=2xx\n" \
                 "@expect body=Signed in as\nGET /posts\n", File.read(copy)
  end

  it "keeps a list as it is without a logged-in text, or with probes of its own" do
    plain = list("--- name=home\nGET /\n")
    assert_equal plain, Rackbench::RequestList.for_trial(plain, dir: dir, probe_path: "/", probe_body: nil)
    own = list("--- name=home\nGET /\n--- probe name=me\n@expect body=Hi {{user.login}}\nGET /me\n")
    assert_equal own, Rackbench::RequestList.for_trial(own, dir: dir, probe_path: "/", probe_body: "Signed in")
  end

  it "says how many slots lost their session, at which edge, and why" do
    assert_nil Rackbench::RequestList.lost_sessions(nil)
    ok = { "passed" => 4, "failed" => 0, "unchecked" => 0, "failed_slots" => [], "reason" => nil }
    assert_nil Rackbench::RequestList.lost_sessions("slots" => 4, "start" => ok, "end" => ok)
    lost = { "slots" => 10,
             "start" => { "passed" => 4, "failed" => 6, "failed_slots" => [0, 1, 2, 3, 4, 5],
                          "reason" => "slot 0: session-probe: status 302 to /login, expected 2xx" },
             "end" => { "passed" => 4, "failed" => 6, "failed_slots" => [0, 1, 2, 3, 4, 5], "reason" => "slot 0: x" } }
    assert_equal "6 of 10 connection slots lost their session (failed probes: 6 at the window's start, 6 after its " \
                 "end; slots 0, 1, 2, 3, 4, 5): slot 0: session-probe: status 302 to /login, expected 2xx",
                 Rackbench::RequestList.lost_sessions(lost)
  end
end
