# frozen_string_literal: true

require "digest"
require "fileutils"
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
        @answers[key] ||= cached(key) || probe(variant, env, key)
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
        keep(key, answer) unless answer["timed_out"]
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
        exe = File.realpath(variant.install.path)
        stat = File.stat(exe)
        Digest::SHA256.hexdigest(JSON.generate([FORMAT, exe, stat.size, stat.mtime.to_f, variant.options, env.sort,
                                                @valgrind.program, @valgrind.version, SCRIPT]))[0, 24]
      rescue SystemCallError
        Digest::SHA256.hexdigest(JSON.generate([FORMAT, variant.command, env.sort, SCRIPT]))[0, 24]
      end

      def path(key)
        @cache_dir && File.join(@cache_dir, "#{key}.json")
      end

      def cached(key)
        file = path(key)
        file && File.file?(file) ? JSON.parse(File.read(file)) : nil
      rescue JSON::ParserError, SystemCallError
        nil
      end

      # Written whole by rename: two runs probing at once each write a
      # whole answer.
      def keep(key, answer)
        file = path(key)
        return unless file

        FileUtils.mkdir_p(File.dirname(file))
        File.write("#{file}.#{Process.pid}.tmp", JSON.generate(answer))
        File.rename("#{file}.#{Process.pid}.tmp", file)
      rescue SystemCallError
        nil
      end
    end
  end
end
