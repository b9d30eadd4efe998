# frozen_string_literal: true

require "uri"

# download: a body of N MiB (default 8) streamed in 64 KiB chunks, with its
# Content-Length, so the server's write path and the Rack body protocol are
# what is measured (the engine reports bytes/s). The chunk is one frozen
# string, yielded again and again: the app allocates nothing per chunk.
class DownloadApp
  MIB = 1024 * 1024
  CHUNK = ("x" * (64 * 1024)).freeze
  CHUNKS_PER_MIB = MIB / CHUNK.bytesize
  DEFAULT_MB = 8
  MAX_MB = 1024
  # Rack requires a headers Hash the server may change (servers add
  # Content-Length or Transfer-Encoding): a new one per response.
  def self.text = { "content-type" => "text/plain" }

  # A Rack body that yields the same chunk chunks times.
  class Body
    def initialize(chunks)
      @chunks = chunks
    end

    def each
      @chunks.times { yield CHUNK }
    end
  end

  def call(env)
    return [200, self.class.text, ["ok\n"]] if env["PATH_INFO"] == "/up"
    return [404, self.class.text, ["not found\n"]] unless env["PATH_INFO"] == "/"

    mb = megabytes(env["QUERY_STRING"].to_s)
    return [400, self.class.text, ["mb must be an integer from 0 to #{MAX_MB}\n"]] unless mb

    headers = { "content-type" => "application/octet-stream", "content-length" => (mb * MIB).to_s }
    [200, headers, Body.new(mb * CHUNKS_PER_MIB)]
  end

  private

  # The mb parameter (DEFAULT_MB when absent), or nil when it is not an
  # integer in 0..MAX_MB.
  def megabytes(query)
    value = URI.decode_www_form(query).to_h.fetch("mb", DEFAULT_MB.to_s)
    mb = Integer(value, 10)
    mb if mb.between?(0, MAX_MB)
  rescue ArgumentError
    nil
  end
end
