# frozen_string_literal: true

require "test_helper"
require "stringio"
require "rackbench/cli"
require "rackbench/cli/run_command"

# `rackbench run --ready-timeout`: how long a server may take to boot and
# answer its first request, the Runner's 60 s unless the command says.
describe "rackbench run --ready-timeout" do
  def parsed(*argv)
    options = {}
    Rackbench::CLI::RunCommand.new(out: StringIO.new, err: StringIO.new).send(:parse, ["exp.yml", *argv], options)
    options
  end

  it "takes a duration, and refuses anything else in one line" do
    assert_equal 300.0, parsed("--ready-timeout", "5m")[:ready_timeout_s]
    assert_nil parsed[:ready_timeout_s]
    assert_equal 60, Rackbench::Runner::READY_TIMEOUT_S
    code, _out, err = cli("run", "exp.yml", "--ready-timeout", "soon")
    assert_equal [2, "rackbench: --ready-timeout takes a duration such as 30m, 90s or 1h, got 'soon'\n"], [code, err]
  end
end
