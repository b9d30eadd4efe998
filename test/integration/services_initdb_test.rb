# frozen_string_literal: true

require "test_helper"

# PostgreSQL's initdb run as a command (a stand-in that fails); the
# services' settings and states are unit tests (test/unit/services_test.rb).
describe "a service's initdb" do
  let(:postgresql) { Rackbench::Services::Postgresql.new }

  it "fails initdb in one line, quoting its error and naming its log" do
    Dir.mktmpdir do |tmp|
      initdb = File.join(tmp, "initdb")
      File.write(initdb, "#!/bin/sh\necho 'initdb: error: directory \"x\" exists but is not empty' >&2\nexit 1\n")
      File.chmod(0o755, initdb)
      postgresql.instance_variable_set(:@paths, { init: initdb, server: "/bin/false", client: "/bin/false" })
      log = File.join(tmp, "service.log")
      error = assert_raises(Rackbench::SetupError) { postgresql.prepare(dir: tmp, account: nil, log: log) }
      assert_equal "initdb failed: initdb: error: directory \"x\" exists but is not empty (log: #{log})", error.message
      assert_match(/exists but is not empty/, File.read(log))
    end
  end
end
