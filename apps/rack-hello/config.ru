# frozen_string_literal: true

# rack-hello: the floor of any Ruby web stack. A frozen string, no
# allocation beyond what the server itself does per request: what remains
# is the cost of the server, Rack and the Ruby running them.
#
# RACK_HELLO_BURN_US=N (a whole number of microseconds, default 0) makes
# every request burn N µs of CPU first: a known slowdown, for proving that
# a run detects what it should (doc/apps.md, doc/methodology.md "Time to a
# verdict"). The body then says so ("burn_us=N"), so the app check proves
# the knob inside the running server; unset or 0, the app is the plain
# floor, with not even a branch per request.
BURN_US = Integer(ENV.fetch("RACK_HELLO_BURN_US", "0"), 10)
raise ArgumentError, "RACK_HELLO_BURN_US must be >= 0, got #{BURN_US}" if BURN_US.negative?

# The thread's own CPU clock, not the monotonic one: a thread preempted
# while spinning would burn less CPU than asked on a busy machine, and the
# slowdown's true size is computed from the burn's CPU µs.
BURN_CLOCK = defined?(Process::CLOCK_THREAD_CPUTIME_ID) ? Process::CLOCK_THREAD_CPUTIME_ID : Process::CLOCK_MONOTONIC
BODY = BURN_US.zero? ? "Hello, World!\n" : "Hello, World! burn_us=#{BURN_US}\n"
HEADERS = { "content-type" => "text/plain", "content-length" => BODY.bytesize.to_s }.freeze

if BURN_US.zero?
  run ->(_env) { [200, HEADERS.dup, [BODY]] }
else
  run(lambda do |_env|
    deadline_us = Process.clock_gettime(BURN_CLOCK, :float_microsecond) + BURN_US
    nil while Process.clock_gettime(BURN_CLOCK, :float_microsecond) < deadline_us
    [200, HEADERS.dup, [BODY]]
  end)
end
