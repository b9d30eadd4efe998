# frozen_string_literal: true

# RAILS_HELLO_LOOP=N (a whole number, default 0) makes every request run a
# loop of N iterations before it renders: a known slowdown of a fixed amount
# of work, for proving that a run detects what it should (doc/apps.md).
# Work, not time: under valgrind a clock-based burn would do far less work
# than it does natively, while a loop executes the same instructions at any
# speed. The body then says so ("loop=N"), so the app check proves the knob
# inside the running server; unset or 0, the action is the plain one, with
# not even a branch per request.
class HelloController < ActionController::Base
  LOOP = Integer(ENV.fetch("RAILS_HELLO_LOOP", "0"), 10)
  raise ArgumentError, "RAILS_HELLO_LOOP must be >= 0, got #{LOOP}" if LOOP.negative?

  BODY = LOOP.zero? ? "Hello, World!" : "Hello, World! loop=#{LOOP}"

  if LOOP.zero?
    def index
      render plain: BODY
    end
  else
    def index
      i = 0
      i += 1 while i < LOOP
      render plain: BODY
    end
  end
end
