# frozen_string_literal: true

# errors: exactly one request in FAIL_EVERY (1 in 20, 5%) answers 500, the
# others 200, to prove error accounting end to end (engine, runner, store,
# report). A counter per process rather than a random draw: the fraction is
# exact under any load and any number of threads (the counter is taken
# under a mutex), and every process of a multi-process server fails its own
# 1 in 20, so the total is 5% within one request per process.
class ErrorsApp
  FAIL_EVERY = 20
  # Rack requires a headers Hash the server may change (servers add
  # Content-Length or Transfer-Encoding): a new one per response.
  def self.text = { "content-type" => "text/plain" }
  OK = "ok\n"
  FAILED = "deliberate failure (1 request in #{FAIL_EVERY})\n"

  def initialize
    @count = 0
    @mutex = Mutex.new
  end

  def call(env)
    return [200, self.class.text, [OK]] if env["PATH_INFO"] == "/up" # health: not counted
    return [404, self.class.text, ["not found\n"]] unless env["PATH_INFO"] == "/"

    (next_count % FAIL_EVERY).zero? ? [500, self.class.text, [FAILED]] : [200, self.class.text, [OK]]
  end

  private

  def next_count
    @mutex.synchronize { @count += 1 }
  end
end
