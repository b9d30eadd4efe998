# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # The RUBY_GC_* variables of every configuration, checked against the
      # ruby that will run them before any trial: a variable the ruby does
      # not read (a typo, or one another Ruby version has, such as
      # RUBY_GC_HEAP_INIT_SLOTS on 3.4, which reads RUBY_GC_HEAP_0_INIT_SLOTS
      # and the like) or a value it ignores stops the run in one line,
      # instead of failing each of that configuration's trials as its
      # identity check finds it (Identity::Expectation.build, which still
      # proves it inside every server).
      #
      # CRuby reads its GC variables once at start and names each one with
      # -w (Identity::RuntimeSettings); a bare `ruby -w` with the same
      # variables says what the server will take, in a fraction of a second
      # and once per ruby and set of variables.
      class GcSettingsCheck
        TIMEOUT_S = 60
        # No RubyGems: the ruby reads the variables at start, before it.
        SCRIPT = ["-w", "--disable-gems", "-e", ""].freeze

        # variants :: label => Rubies::Variant
        # parent_env :: the runner's environment (PATH and the like)
        # run :: called like Rubies::Child.run
        def initialize(variants:, parent_env:, run: Rubies::Child.method(:run))
          @variants = variants
          @parent_env = parent_env
          @run = run
        end

        # Raises SetupError naming the first configuration of +configs+
        # (Experiment::Config) whose ruby does not take one of its RUBY_GC_*
        # variables, and the variable.
        def check!(configs)
          configs.group_by { |config| [config.ruby.label, gc_env(config)] }.each do |(label, gc), group|
            next if gc.empty?

            variant = @variants.fetch(label)
            next unless variant.install.engine == "ruby" # JRuby's GC is the JVM's

            problems = problems(variant, gc)
            next if problems.empty?

            more = problems.size > 1 ? " (and #{problems.size - 1} more)" : ""
            raise SetupError, "#{group.first}: #{problems.first}#{more}; nothing was run"
          end
        end

        private

        # The RUBY_GC_* variables a trial of +config+ sets, in ServerEnv's
        # order of precedence (the app's, the ruby variant's, the
        # experiment's), unset ones left out.
        def gc_env(config)
          app = App.resolve(config.app)
          variant = @variants.fetch(config.ruby.label)
          merged = app.env.to_h.merge(variant.env.to_h).merge(config.env.to_h)
          merged.select { |name, value| name.start_with?(Identity::RuntimeSettings::GC_PREFIX) && !value.nil? }
                .transform_values(&:to_s).sort.to_h
        end

        def problems(variant, gc)
          # The machine's part of the shell's environment, as a server gets
          # it (ServerEnv): no RUBYOPT of rackbench's own `bundle exec`, no
          # RUBY_GC_* the trials do not set.
          env = Rubies::CleanEnv.clean(@parent_env).select do |name, _|
            ServerEnv::MACHINE_NAMES.include?(name) || name.match?(ServerEnv::MACHINE_PATTERN)
          end
          variant.env.each { |name, value| value.nil? ? env.delete(name) : env[name] = value }
          result = @run.call([*variant.command, *SCRIPT], env: env.merge(gc), timeout_s: TIMEOUT_S, chdir: Dir.tmpdir)
          unless result.success?
            raise SetupError, "ruby '#{variant.name}' (#{variant.command.join(" ")}) did not start with " \
                              "#{gc.map { |k, v| "#{k}=#{v}" }.join(" ")}: " \
                              "#{result.timed_out ? "timed out" : result.output.to_s.lines.last.to_s.strip}"
          end
          params = Identity::RuntimeSettings.gc_params(result.output)
          Identity::RuntimeSettings.gc_problems(gc, params, ruby: "ruby '#{variant.name}'")
        end
      end
    end
  end
end
