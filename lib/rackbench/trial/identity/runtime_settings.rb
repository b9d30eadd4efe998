# frozen_string_literal: true

module Rackbench
  module Trial
    module Identity
      # What a ruby does with a trial's runtime settings, learnt from the
      # variant's own command before the server boots (Expectation.probe):
      #
      # - the RUBY_GC_* variables it really took. CRuby reads them once at
      #   start, silently; with -w it prints a line for each one it reads:
      #   "RUBY_GC_HEAP_INIT_SLOTS=600000 (default value: 10000)", the
      #   same line ending "is ignored because it must be greater than 0."
      #   for a value out of range, and "invalid string for NAME: VALUE".
      #   A name it does not read (a typo, or a variable another Ruby
      #   version has) prints nothing. The server runs the same binary with
      #   the same environment (its processes report the values), so what
      #   this run printed is what the server took;
      # - whether MJIT can compile here: it runs a C compiler at run time,
      #   and without one a ruby started with --mjit reports MJIT enabled
      #   while compiling nothing.
      module RuntimeSettings
        GC_PREFIX = "RUBY_GC_"
        TAKEN = /^(#{GC_PREFIX}\w+)=(\S+) \(default value: [^)]*\)(.*)$/
        INVALID = /^invalid string for (#{GC_PREFIX}\w+): (.*)$/
        # Calls before MJIT compiles a method: 1, and --mjit-wait makes the
        # compilation synchronous, so a working compiler has compiled the
        # probe's method before the script ends. Without RubyGems, whose
        # every method would be compiled first (half a second each: minutes).
        MJIT_CHECK = ["--disable-gems", "--mjit-wait", "--mjit-min-calls=1", "--mjit-verbose=1",
                      "-e", "def rackbench_mjit_probe = 1; 3.times { rackbench_mjit_probe }"].freeze
        MJIT_SUCCESS = /^JIT success .*rackbench_mjit_probe/

        module_function

        # The RUBY_GC_* lines of a `ruby -w` run's output: name =>
        # { "value" => as the ruby printed it, "problem" => nil, or why it
        # was not taken }.
        def gc_params(output)
          output.to_s.each_line.with_object({}) do |line, params|
            if (m = line.match(TAKEN))
              ignored = m[3].strip.sub(/\A(is ignored because .*?)\.?\z/, '\1')
              params[m[1]] = { "value" => m[2], "problem" => ignored.empty? ? nil : ignored }
            elsif (m = line.match(INVALID))
              params[m[1]] = { "value" => m[2].strip, "problem" => "is not a valid value" }
            end
          end
        end

        # One line per RUBY_GC_* variable of +env+ (name => value, nil:
        # unset) that the ruby did not take, given what #gc_params found.
        def gc_problems(env, params, ruby:)
          env.filter_map do |name, value|
            next nil if value.nil? || !name.start_with?(GC_PREFIX)

            found = params[name]
            if found.nil?
              "#{name}=#{value}: #{ruby} does not read this variable (ruby -w names every GC variable it reads)"
            elsif found["problem"]
              "#{name}=#{value}: #{ruby} #{found["problem"]}"
            end
          end
        end

        # The RUBY_GC_* values the ruby took (name => value as it printed
        # it, e.g. "1.100000" for 1.1).
        def gc_taken(env, params)
          env.each_with_object({}) do |(name, value), taken|
            next if value.nil? || !name.start_with?(GC_PREFIX)

            found = params[name]
            taken[name] = found["value"] if found && found["problem"].nil?
          end
        end

        # nil when the variant's command compiles a method with MJIT in
        # this environment, else the reason (the last line it printed).
        # run: called like Rubies::Child.run.
        def mjit_problem(command, env:, chdir:, run:, timeout_s:)
          result = run.call([*command, *MJIT_CHECK], env: env, timeout_s: timeout_s, chdir: chdir)
          return nil if result.success? && result.output.to_s.match?(MJIT_SUCCESS)

          last = result.timed_out ? "no method compiled within #{timeout_s} s" : result.output.to_s.lines.map(&:strip).reject(&:empty?).last
          "MJIT is on but compiled nothing (MJIT runs the C compiler the ruby was built with, at run time): " \
            "#{last || "no output"}"
        end
      end
    end
  end
end
