# frozen_string_literal: true

# rack-hello: the floor of any Ruby web stack. A frozen string, no
# allocation beyond what the server itself does per request: what remains
# is the cost of the server, Rack and the Ruby running them.
BODY = "Hello, World!\n"
HEADERS = { "content-type" => "text/plain", "content-length" => BODY.bytesize.to_s }.freeze

run ->(_env) { [200, HEADERS.dup, [BODY]] }
