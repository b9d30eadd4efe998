# frozen_string_literal: true

require "fileutils"
require "tmpdir"

module Rackbench
  module Instructions
    # The collector's functions of a ruby whose libruby names them by
    # address only (Debian's ruby3.1 is stripped: "0x00000000000d52a0"),
    # learned before the run by difference. The same script runs twice under
    # callgrind, counting only inside one Array#each (rb_ary_each, which a
    # stripped libruby still exports by name) that allocates objects,
    # strings and large buffers and keeps some of them (so that they age
    # and major GCs come): once with the GC on, once after GC.disable (run
    # before the counted part: both runs count the same Ruby code). A
    # function of the ruby that the first run called and the second never
    # did, called from a function both ran, is where the mutator enters the
    # collector (the sweep under gc_start, the lazy sweep's step under
    # gc_continue, the marking of the roots): those are the collector's
    # entries for GcCost. An entry is real collection work: one whose calls
    # cost less than ENTRY_MIN_SHARE of all the entries' is something the
    # GC only set off (an interrupt check running its postponed jobs), not
    # the collector, and is left out; so is any function the ruby exports
    # by name (rb_threadptr_execute_interrupts, rb_gc_mark): in a stripped
    # libruby the collector's own functions are the unnamed ones.
    #
    # gc_start and gc_continue run in both (with the GC off they return at
    # once): those callers of the entries whose own code ran ten times as
    # long with the GC on are entries too (#busy_callers). Checked on Ruby
    # 3.4.5 built with symbols, where GcCost names the collector's
    # functions: doc/performance.md gives both figures.
    #
    # A ruby that names its functions needs no probe (#entries answers
    # nil: GcCost uses the names). An answer is kept in the rackbench
    # cache, keyed by the interpreter's file and valgrind's version, as
    # Support's are.
    class GcProbe
      SCRIPT = <<~RUBY
        GC.disable if ENV["RACKBENCH_GC_PROBE"] == "off"
        kept = []
        [0].each do
          60_000.times do |i|
            text = "rackbench gc probe " * 4
            pair = { i => text, text => [i, i.to_s] }
            kept << pair if (i % 4).zero?
          end
          100.times { "y" * 200_000 }
        end
        puts kept.size
      RUBY
      ANCHOR = "rb_ary_each"
      ENTRY_MIN_SHARE = 0.001
      BUSY_FACTOR = 10
      TIMEOUT_S = 900
      # Changes when what a kept answer means does (2: the busy callers).
      FORMAT = 2

      # :valgrind :: a Valgrind
      # :cache_dir :: where answers are kept (nil: nowhere)
      # :runner :: runs an argv (Rubies::Child.run's keywords), for tests
      # :dir :: where the two runs' files go (default: a temporary directory)
      def initialize(valgrind:, cache_dir: nil, runner: Rubies::Child.method(:run), dir: nil)
        @valgrind = valgrind
        @cache_dir = cache_dir
        @runner = runner
        @dir = dir
        @answers = {}
        @kept = Answers.new(cache_dir, prefix: "gc-")
      end

      # The collector's entries of +variant+'s ruby (Rubies::Variant) as
      # [object file's name, function name] pairs, when its libruby does not
      # name them; nil when it does (GcCost's names serve) or when the probe
      # could not tell (GcFigure then has no GC instructions: "named" false).
      def entries(variant, env:)
        key = key(variant)
        @answers[key] ||= @kept.read(key) || probe(variant, env, key)
        list = @answers[key]["entries"]
        list&.map { |object, name| [object, name] }
      end

      # Why the last probe of +variant+ could not tell, or nil.
      def reason(variant)
        @answers[key(variant)]&.fetch("reason", nil)
      end

      # The entries from the two runs' files (CallgrindFiles): functions of
      # the ruby's own objects called with the GC on only, from a function
      # called in both that the collector itself never calls. That last
      # condition leaves out the callbacks the collector runs through
      # functions the mutator shares (rb_st_foreach calling a table's mark
      # function): they are inside a collection, not its entry. Pure: the
      # unit tests give it files of their own.
      def self.difference(on, off, ruby_objects)
        seen_off = {}
        off.functions.each_key { |f| seen_off[key_of(f)] = true }
        off.calls.each_key { |(caller, callee)| seen_off[key_of(caller)] = seen_off[key_of(callee)] = true }
        used_by_gc = {}
        on.calls.each_key do |(caller, callee)|
          used_by_gc[key_of(callee)] = true unless seen_off[key_of(caller)]
        end
        costs = Hash.new(0)
        on.calls.each do |(caller, callee), call|
          callee_key = key_of(callee)
          caller_key = key_of(caller)
          next if seen_off[callee_key] || !seen_off[caller_key] || used_by_gc[caller_key]
          next unless ruby_objects.include?(callee_key.first)
          next unless Collection::ADDRESS.match?(callee_key.last) || GcCost.gc?(callee_key.last)

          costs[callee_key] += call.inclusive.first.to_i
        end
        total = costs.values.sum
        entries = costs.select { |_, cost| cost >= total * ENTRY_MIN_SHARE }.keys
        (entries + busy_callers(on, off, entries, total)).uniq.sort
      end

      # The entries' callers that both runs called, but whose own code ran
      # at least BUSY_FACTOR times as long with the GC on: gc_start and
      # gc_continue themselves, which the run with the GC off calls too
      # (they return at once), and whose inlined steps (marking the roots,
      # the lazy sweep's loop) are a quarter of Ruby 3.4's minor GC.
      def self.busy_callers(on, off, entries, total)
        own_on = Hash.new(0)
        own_off = Hash.new(0)
        on.functions.each { |f, cost| own_on[key_of(f)] += cost }
        off.functions.each { |f, cost| own_off[key_of(f)] += cost }
        wanted = entries.to_h { |e| [e, true] }
        on.calls.each_key.filter_map do |(caller, callee)|
          next unless wanted[key_of(callee)]

          k = key_of(caller)
          next if wanted[k] || !(Collection::ADDRESS.match?(k.last) || GcCost.gc?(k.last))

          extra = own_on[k] - own_off[k]
          k if extra >= total * ENTRY_MIN_SHARE && own_on[k] >= BUSY_FACTOR * own_off[k]
        end
      end

      def self.key_of(function)
        [File.basename(function.object.to_s), function.name.to_s.sub(/'\d+\z/, "")]
      end

      private

      def probe(variant, env, key)
        dir = @dir || Dir.mktmpdir("rackbench-gc-probe")
        on = run(variant, env, File.join(dir, "on.out"), "on")
        off = run(variant, env, File.join(dir, "off.out"), "off")
        answer = answer(on, off)
        @kept.write(key, answer) unless answer["reason"]
        answer
      rescue Error => e
        { "entries" => nil, "reason" => e.message }
      ensure
        FileUtils.rm_rf(dir) if dir && @dir.nil?
      end

      def answer(on, off)
        return { "entries" => nil, "named" => true } if on.functions.each_key.any? { |f| GcCost.gc?(f.name) }
        return { "entries" => nil, "reason" => "the probe counted nothing inside #{ANCHOR}" } if on.total.zero?

        objects = on.functions.each_key.map { |f| File.basename(f.object.to_s) }.select { |o| ruby_object?(o) }.uniq
        entries = self.class.difference(on, off, objects)
        return { "entries" => nil, "reason" => "the probe found no function the GC alone runs" } if entries.empty?

        { "entries" => entries }
      end

      # libruby (shared builds) or the ruby executable (static ones).
      def ruby_object?(name)
        name.start_with?("libruby") || name.match?(/\Aruby[\d.]*\z/)
      end

      def run(variant, env, out, mode)
        argv = [@valgrind.program, "--tool=#{Valgrind::TOOL}", "--collect-atstart=no", "--toggle-collect=#{ANCHOR}",
                "--dump-line=no", "--callgrind-out-file=#{out}", "--log-file=/dev/null", *variant.command,
                "--disable-gems", "-e", SCRIPT]
        result = @runner.call(argv, env: env.merge("RACKBENCH_GC_PROBE" => mode), timeout_s: TIMEOUT_S)
        raise Error, "the GC probe of #{variant.name} had no answer within #{TIMEOUT_S} s" if result.timed_out
        unless result.status.success?
          raise Error, "the GC probe of #{variant.name} failed: #{Support.headline(result.output.to_s)}"
        end

        CallgrindFile.read(out)
      end

      def key(variant)
        Answers.key(variant.install.path, [FORMAT, @valgrind.version, SCRIPT], fallback: [FORMAT, variant.command, SCRIPT])
      end
    end
  end
end
