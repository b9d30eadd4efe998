# frozen_string_literal: true

require "test_helper"
require_relative "../../apps/download/download_app"

describe "apps/download" do
  let(:app) { DownloadApp.new }

  def get(query = "")
    app.call("PATH_INFO" => "/", "QUERY_STRING" => query)
  end

  def body_bytes(body)
    total = 0
    body.each { |chunk| total += chunk.bytesize }
    total
  end

  it "streams exactly 8 MiB by default, in 64 KiB chunks, with a matching Content-Length" do
    status, headers, body = get
    assert_equal 200, status
    assert_equal "application/octet-stream", headers["content-type"]
    assert_equal (8 * 1024 * 1024).to_s, headers["content-length"]
    assert_equal 8 * 1024 * 1024, body_bytes(body)
    chunks = []
    body.each { |chunk| chunks << chunk }
    assert_equal 128, chunks.size
    assert(chunks.all? { |chunk| chunk.equal?(DownloadApp::CHUNK) && chunk.frozen? }, "one frozen chunk, no copies")
  end

  it "streams N MiB for ?mb=N, 0 included" do
    [0, 1, 3].each do |mb|
      _, headers, body = get("mb=#{mb}")
      assert_equal mb * 1_048_576, body_bytes(body)
      assert_equal (mb * 1_048_576).to_s, headers["content-length"]
    end
  end

  it "refuses an mb that is not an integer from 0 to 1024" do
    ["mb=-1", "mb=1025", "mb=abc", "mb=1.5", "mb="].each do |query|
      status, headers, body = get(query)
      assert_equal 400, status, query
      assert_equal "text/plain", headers["content-type"]
      assert_match(/mb must be an integer from 0 to 1024/, body.join)
    end
  end
end
