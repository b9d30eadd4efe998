# frozen_string_literal: true

require "test_helper"

describe Rackbench::ServerProcess::LogError do
  LogError = Rackbench::ServerProcess::LogError

  it "quotes Ruby's exception line without its source location" do
    log = <<~LOG
      Puma starting in single mode...
      /app/config/environment.rb:5:in `<main>': undefined method `foo' for nil:NilClass (NoMethodError)
      \tfrom /gems/puma/lib/puma/configuration.rb:10:in `load'
      \tfrom /gems/puma/bin/puma:10:in `<main>'
    LOG
    assert_equal "undefined method `foo' for nil:NilClass (NoMethodError)", LogError.line(log)
  end

  it "prefers the error over the frames a framework prints after it" do
    log = <<~LOG
      ! Unable to load application: ActiveRecord::AdapterNotSpecified: 'development' database is not configured
      bundler: failed to load command: puma (/gems/bin/puma)
      /gems/activerecord/lib/connection_handling.rb:12:in `resolve': 'development' database is not configured (ActiveRecord::AdapterNotSpecified)
      \tfrom /gems/activerecord/lib/core.rb:3:in `connect'
    LOG
    assert_equal "'development' database is not configured (ActiveRecord::AdapterNotSpecified)", LogError.line(log)
  end

  it "takes a line starting with an exception class" do
    assert_equal "Errno::EADDRINUSE: Address already in use - bind(2)",
                 LogError.line("starting\nErrno::EADDRINUSE: Address already in use - bind(2)\n  /x.rb:1:in `b'\n")
  end

  it "falls back to the last line that is not a frame, and ignores rackbench's own notes" do
    assert_equal "killed", LogError.line("booting\nkilled\n  /x.rb:1:in `b'\n[rackbench] stopped in 0.2s\n")
    assert_equal "* Version 6 (Birdie's Version)", LogError.line("* Version 6 (Birdie's Version)\n")
    assert_nil LogError.line("\n\n")
  end
end
