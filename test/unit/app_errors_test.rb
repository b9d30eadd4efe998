# frozen_string_literal: true

require "test_helper"
require_relative "../../apps/errors/errors_app"

describe "apps/errors" do
  let(:app) { ErrorsApp.new }

  def get(path = "/")
    app.call("PATH_INFO" => path, "QUERY_STRING" => "")
  end

  it "fails exactly 1 request in 20 over 10,000 calls, every 20th" do
    statuses = Array.new(10_000) { get.first }
    assert_equal 500, statuses.count(500)
    assert_equal 9_500, statuses.count(200)
    assert_equal (1..500).map { |i| i * 20 - 1 }, statuses.each_index.select { |i| statuses[i] == 500 }
  end

  it "keeps the fraction exact across threads" do
    statuses = Array.new(4) { Thread.new { Array.new(2_500) { get.first } } }.flat_map(&:value)
    assert_equal 500, statuses.count(500)
  end

  it "does not count health checks, and answers its first request with 200 (the app check)" do
    100.times { assert_equal 200, get("/up").first }
    status, headers, body = get
    assert_equal [200, "text/plain", "ok\n"], [status, headers["content-type"], body.join]
    18.times { get }
    status, headers, body = get
    assert_equal [500, "text/plain"], [status, headers["content-type"]]
    assert_match(/deliberate/, body.join)
  end
end
