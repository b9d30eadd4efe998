# frozen_string_literal: true

require "json"

module Rackbench
  module Instructions
    # Whether a ruby variant can run under valgrind, asked before the run:
    # a configuration it cannot run is left out of the plan with the reason
    # (never measured some other way). Ruby 3.1's YJIT, for one, crashes at
    # boot under valgrind ("[BUG] Segmentation fault" in rubygems.rb).
    #
    # The probe runs the variant's interpreter, options and environment
    # under callgrind as a trial's server runs (instrumentation off), on a
    # script that loads rubygems and a default gem and calls one method
    # often enough for any JIT to compile it; then once more with
    # instrumentation on from the start, which a window's requests run
    # with. Either failing refuses the variant, naming what it printed.
    #
    # An answer is kept in the rackbench cache, keyed by everything it
    # depends on (the interpreter's file, its options and environment,
    # valgrind's version, the script): a probe under valgrind takes
    # seconds to a minute. A probe that timed out is never kept.
    class Support
      # Loads rubygems and json, then calls a method 3,000 times: above any
      # JIT's threshold (YJIT compiles after 30 calls in 3.4, MJIT after
      # 10,000 only in 3.1, which has no MJIT in Debian's build).
      SCRIPT = <<~RUBY
        require "json"
        def rackbench_probe(i)
          i * 2 + 1
        end
        sum = 0
        3000.times { |i| sum += rackbench_probe(i) }
        puts JSON.generate("probe" => sum)
      RUBY
      EXPECTED = JSON.generate("probe" => (0...3000).sum { |i| i * 2 + 1 })
      TIMEOUT_S = 600
      # Changes when what a cached answer means does.
      FORMAT = 1

      # :valgrind :: a Valgrind
      # :cache_dir :: where answers are kept (nil: nowhere)
      # :runner :: runs an argv (Rubies::Child.run's keywords), for tests
      def initialize(valgrind:, cache_dir: nil, runner: Rubies::Child.method(:run))
        @valgrind = valgrind
        @cache_dir = cache_dir
        @runner = runner
        @answers = {}
        @kept = Answers.new(cache_dir)
        @gc_probe = GcProbe.new(valgrind: valgrind, cache_dir: cache_dir, runner: runner)
      end

      # A stripped ruby's collector functions (GcProbe#entries), nil for a
      # ruby that names them or one the probe could not tell.
      def gc_entries(variant, env:)
        @gc_probe.entries(variant, env: env)
      end

      # Why +variant+ (a Rubies::Variant) cannot run under valgrind, or nil.
      # +env+ is the environment its probe runs with (the variant's own
      # variables over a clean base).
      def reason(variant, env:)
        missing = @valgrind.reason
        return missing if missing
        return "#{variant.name}: valgrind counts a JVM's instructions, not Ruby's: instructions need CRuby" \
          unless variant.install.engine == "ruby"

        key = key(variant, env)
        @answers[key] ||= @kept.read(key) || probe(variant, env, key)
        @answers[key]["reason"]
      end

      private

      def probe(variant, env, key)
        answer = { "reason" => nil }
        [["--instr-atstart=no"], ["--instr-atstart=yes"]].each do |instr|
          failure = run(variant, env, instr)
          next unless failure

          answer = { "reason" => "#{variant.name} cannot run under valgrind (#{instr.first}): #{failure}" }
          answer["timed_out"] = true if failure.start_with?("no answer")
          break
        end
        @kept.write(key, answer) unless answer["timed_out"]
        answer
      end

      # nil when the script ran and printed what it should, else what went
      # wrong in a line.
      def run(variant, env, instr)
        argv = [@valgrind.program, "--tool=#{Valgrind::TOOL}", *instr, "--callgrind-out-file=/dev/null",
                "--log-file=/dev/null", *variant.command, "-e", SCRIPT]
        result = @runner.call(argv, env: env, timeout_s: TIMEOUT_S)
        return "no answer within #{TIMEOUT_S} s" if result.timed_out

        output = result.output.to_s
        return nil if result.status.success? && output.include?(EXPECTED)

        "#{self.class.headline(output)} (exit status #{result.status.exitstatus || result.status.termsig})"
      rescue SystemCallError => e
        "cannot run it: #{e.message}"
      end

      # The line that says what broke: Ruby's "[BUG] ..." line, else the
      # last line printed.
      def self.headline(output)
        lines = output.lines.map(&:strip).reject(&:empty?)
        lines.find { |l| l.include?("[BUG]") } || lines.last || "no output"
      end

      def key(variant, env)
        Answers.key(variant.install.path, [FORMAT, variant.options, env.sort, @valgrind.program, @valgrind.version, SCRIPT],
                    fallback: [FORMAT, variant.command, env.sort, SCRIPT])
      end
    end
  end
end
