# frozen_string_literal: true

require "test_helper"

# What a run says while another run installs gems for the same ruby.
describe Rackbench::Trial::Http::LockNotice do
  Holder = Rackbench::HolderLock::Holder
  LockNotice = Rackbench::Trial::Http::LockNotice

  let(:holder) { Holder.new(pid: 4242, since: Time.utc(2026, 11, 24, 2, 10, 33), log: "/r/logs/bundle-app.log") }

  it "names who holds the lock, since when, and its log, at once" do
    assert_equal "Waiting for pid 4242, which has been installing gems for ruby since 02:10:33 UTC " \
                 "(its log: /r/logs/bundle-app.log)",
                 LockNotice.text(holder, 0.0, ruby: "ruby", lock: "/c/gems/ruby-3.1.0.lock")
  end

  it "says how long it has waited, later" do
    assert_equal "Still waiting for pid 4242 to finish installing gems for ruby (95 s so far; its log: " \
                 "/r/logs/bundle-app.log)",
                 LockNotice.text(holder, 95.2, ruby: "ruby", lock: "/c/gems/ruby-3.1.0.lock")
  end

  it "falls back to the lock's path when the holder (an older rackbench) wrote only its pid, or nothing" do
    assert_equal "Waiting for pid 7, which has been installing gems for jruby (lock: /c/gems/jruby-2.6.0.lock)",
                 LockNotice.text(Holder.parse("7\n"), 0.0, ruby: "jruby", lock: "/c/gems/jruby-2.6.0.lock")
    assert_equal "Waiting for another process, which has been installing gems for jruby (lock: /c/l.lock)",
                 LockNotice.text(Holder.parse(""), 0.0, ruby: "jruby", lock: "/c/l.lock")
  end
end
