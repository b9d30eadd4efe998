# frozen_string_literal: true

require "uri"

# io-wait: requests that mostly wait. GET /?ms=N sleeps N ms (default 10)
# and answers; GET /db?queries=N runs N SQLite queries (default 1), each
# ~1-3 ms of work inside SQLite with the GVL released. In both, a thread
# that waits lets the others run: where threads help, unlike cpu.
class IoWaitApp
  DEFAULT_MS = 10
  MAX_MS = 10_000
  DEFAULT_QUERIES = 1
  MAX_QUERIES = 100
  # Rack requires a headers Hash the server may change (servers add
  # Content-Length or Transfer-Encoding): a new one per response.
  def self.text = { "content-type" => "text/plain" }

  # :db :: an object answering query(i) => [count, sum] for /db (each
  #        thread of the server needs its own SQLite connection: see
  #        ItemsQuery), or nil when /db is not served
  # :sleeper :: what sleeps (seconds), replaceable in tests (default: Kernel#sleep)
  def initialize(db: nil, sleeper: Kernel.method(:sleep))
    @db = db
    @sleeper = sleeper
  end

  def call(env)
    case env["PATH_INFO"]
    when "/up" then [200, self.class.text, ["ok\n"]]
    when "/" then wait(params(env))
    when "/db" then queries(params(env))
    else [404, self.class.text, ["not found\n"]]
    end
  end

  private

  def wait(params)
    ms = integer(params, "ms", DEFAULT_MS, 0..MAX_MS)
    return bad_request("ms must be an integer from 0 to #{MAX_MS}") unless ms

    @sleeper.call(ms / 1000.0)
    [200, self.class.text, ["waited #{ms} ms\n"]]
  end

  def queries(params)
    return [404, self.class.text, ["no database\n"]] unless @db

    count = integer(params, "queries", DEFAULT_QUERIES, 1..MAX_QUERIES)
    return bad_request("queries must be an integer from 1 to #{MAX_QUERIES}") unless count

    lines = Array.new(count) { |i| "query #{i}: #{@db.query(i).join(" ")}\n" }
    [200, self.class.text, ["#{count} queries\n", *lines]]
  end

  def params(env)
    URI.decode_www_form(env["QUERY_STRING"].to_s).to_h
  rescue ArgumentError
    {}
  end

  # params[name] as an Integer in range, default when absent, nil when invalid.
  def integer(params, name, default, range)
    return default unless params.key?(name)

    value = Integer(params[name], 10)
    value if range.cover?(value)
  rescue ArgumentError, TypeError
    nil
  end

  def bad_request(text)
    [400, self.class.text, ["#{text}\n"]]
  end
end
