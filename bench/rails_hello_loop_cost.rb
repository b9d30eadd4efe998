# frozen_string_literal: true

# What rails-hello's RAILS_HELLO_LOOP knob costs alone (doc/apps.md), in
# instructions and in time: its controller's action run in a ruby of its
# own, outside Rails (ActionController::Base stubbed so that render does
# nothing), with the loop and without.
#
# Instructions: the action called CALLS times under callgrind with LOOP=N
# and with LOOP=0; the difference over N x CALLS is one iteration's cost.
# Time: the same calls on the thread's CPU clock, best of ROUNDS rounds
# (the least disturbed), the difference per call at the knob's setting.
#
#   bundle exec ruby bench/rails_hello_loop_cost.rb [RUBY] [SETTING]
#
# Prints a JSON summary: instructions per iteration and per call at
# SETTING iterations (default 60), CPU ns per iteration and µs per call.
require "json"
require "open3"
require "rbconfig"

RUBY = ARGV[0] || RbConfig.ruby
SETTING = Integer(ARGV[1] || "60")
CONTROLLER = File.expand_path("../apps/rails-hello/app/controllers/hello_controller.rb", __dir__)
ITERATIONS = 200_000 # per call, for the per-iteration figures
CALLS = 50
ROUNDS = 9

# The child: loads the controller against a stub and runs the action.
CHILD = <<~RUBY
  module ActionController
    class Base
      def render(**) = nil
    end
  end
  load #{CONTROLLER.dump}
  controller = HelloController.new
  calls = Integer(ENV.fetch("CALLS"))
  controller.index # the method and its constant caches warm
  best = Integer(ENV.fetch("ROUNDS")).times.map do
    started = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
    calls.times { controller.index }
    Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond) - started
  end.min
  puts best
RUBY

def child(loop_n, calls:, rounds: ROUNDS, under: [])
  env = { "RAILS_HELLO_LOOP" => loop_n.to_s, "CALLS" => calls.to_s, "ROUNDS" => rounds.to_s }
  out, err, status = Open3.capture3(env, *under, RUBY, "-e", CHILD)
  abort "child failed: #{err}" unless status.success?
  [Integer(out.lines.last), err]
end

def instructions(loop_n)
  Dir.mktmpdir do |dir|
    file = File.join(dir, "callgrind.out")
    child(loop_n, calls: CALLS, rounds: 1,
                  under: ["valgrind", "--tool=callgrind", "--callgrind-out-file=#{file}", "--log-file=/dev/null"])
    Integer(File.read(file)[/^totals: (\d+)/, 1])
  end
end

require "tmpdir"
per_iteration_instructions = (instructions(ITERATIONS) - instructions(0)).fdiv(ITERATIONS * CALLS)
loop_ns, = child(ITERATIONS, calls: CALLS)
plain_ns, = child(0, calls: CALLS)
per_iteration_ns = (loop_ns - plain_ns).fdiv(ITERATIONS * CALLS)
setting_ns, = child(SETTING, calls: 200_000)
plain_calls_ns, = child(0, calls: 200_000)
puts JSON.pretty_generate(
  "ruby" => `#{RUBY} -v`.strip, "setting" => SETTING,
  "instructions_per_iteration" => per_iteration_instructions.round(2),
  "instructions_per_call_at_setting" => (per_iteration_instructions * SETTING).round,
  "cpu_ns_per_iteration" => per_iteration_ns.round(3),
  "cpu_us_per_call_at_setting" => ((setting_ns - plain_calls_ns) / 200_000.0 / 1000).round(4),
  "cpu_us_per_call_at_setting_from_iterations" => (per_iteration_ns * SETTING / 1000).round(4)
)
