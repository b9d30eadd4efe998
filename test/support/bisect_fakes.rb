# frozen_string_literal: true

require "stringio"
require_relative "../fixtures/fakes"
require_relative "bisect_repos"

module Rackbench
  module Test
    # A bisection over real git repositories and worktrees, the real
    # Runner and store, and the fakes of test/fixtures/fakes.rb for what
    # runs a trial: the fake server "serves" whatever commit's app
    # directory it was launched from, and the fake engine reports the
    # throughput that commit's `rps.txt` says (with a jitter, so that
    # batches vary: ±0.1% by turns, or up to its `jitter.txt`'s either
    # way), so a history's figure is written in its commits. A
    # commit whose app directory holds `broken` fails at boot.
    module BisectFakes
      # The load engine of the fakes, reading its figure from the app the
      # launcher last booted; raises Interrupt at its call +interrupt_at+.
      class CommitEngine < ::Fakes::Engine
        attr_reader :apps

        def initialize(launcher, interrupt_at: nil)
          super(interrupt_at: interrupt_at)
          @launcher = launcher
          @apps = []
        end

        def run(settings, env: {}, on_phase: nil)
          dir = @launcher.launches.last.fetch(:app).dir
          @apps << dir
          rps = Float(File.read(File.join(dir, "rps.txt"))) * (1 + jitter(dir))
          @result = ::Fakes::ENGINE_RESULT.merge("rps" => rps, "requests" => (rps * 2).round)
          super
        end

        private

        # ±0.1% by turns; a commit's jitter.txt: up to that much either
        # way, drawn from a generator seeded by the call (the same run
        # draws the same figures).
        def jitter(dir)
          file = File.join(dir, "jitter.txt")
          return @calls.even? ? 0.001 : -0.001 unless File.file?(file)

          Float(File.read(file)) * Random.new(@calls).rand(-1.0..1.0)
        end
      end

      # The launcher of the fakes, whose servers report the gems of their
      # app's `gems.txt` (name version, a line each) as loaded.
      class CommitLauncher < ::Fakes::Launcher
        def boot(keywords)
          booted = super
          file = File.join(keywords.fetch(:app).dir, "gems.txt")
          return booted unless File.file?(file)

          gems = File.readlines(file, chomp: true).to_h(&:split)
          booted.class.new(server: booted.server, boot_s: booted.boot_s, identity: booted.identity.merge("gems" => gems))
        end
      end

      BOOT_FAILURE = "server exited with status 1 before it was ready: broken on purpose"

      module_function

      # [Runner::Steps over the fakes, the engine, the launcher].
      def steps(results_dir, interrupt_at: nil, out: StringIO.new, err: StringIO.new)
        launcher = CommitLauncher.new do |keywords|
          Rackbench::SetupError.new(BOOT_FAILURE) if File.exist?(File.join(keywords.fetch(:app).dir, "broken"))
        end
        engine = CommitEngine.new(launcher, interrupt_at: interrupt_at)
        collaborators = { engine: engine, launcher: launcher, bundles: ::Fakes::Bundles.new,
                          companions: ::Fakes.companions }
        steps = Rackbench::Runner::Steps.new(
          results_dir: results_dir, out: out, err: err, installs: [::Fakes.install], machine: { "machine" => "fake" },
          runner_options: { layout: Rackbench::Runner::CpuLayout.new(server_cpus: nil, engine_cpus: nil),
                            stop_grace_s: 0, parent_env: { "PATH" => "/usr/bin:/bin" }, collaborators: collaborators,
                            watchdog: ::Fakes::Watchdog.new }
        )
        [steps, engine, launcher]
      end

      # An app repository at +dir+ whose commit 0 serves +rps+ and commit
      # N multiplies it by 1 - steps[N] (0.2: 20% slower from then on);
      # commits in +broken+ do not boot; commits in +no_app+ have no
      # config.ru; commit N of +gems+ changes the gems its servers load
      # from then on (name => version); +jitter+ is every commit's jitter
      # (default: 0.001). Returns the hashes, commit 0 first.
      def history(dir, commits:, rps: 1000.0, steps: {}, broken: [], no_app: [], gems: {}, jitter: nil)
        loaded = { "rack" => "3.1.0" }
        snapshots = (0..commits).map do |number|
          rps *= 1.0 - steps.fetch(number, 0.0)
          loaded = loaded.merge(gems[number]) if gems.key?(number)
          files = { "rps.txt" => "#{rps}\n", "gems.txt" => loaded.map { |name, version| "#{name} #{version}\n" }.join }
          files["config.ru"] = "run ->(_env) { [200, {}, [\"Hello\"]] } # #{number}\n" unless no_app.include?(number)
          files["broken"] = "" if broken.include?(number)
          files["jitter.txt"] = "#{jitter}\n" if jitter
          subject = if number.zero? then "Initial commit"
                    elsif steps.key?(number) then "Commit #{number}: slower"
                    else "Commit #{number}"
                    end
          [subject, files]
        end
        BisectRepos.import(dir, snapshots)
      end
    end
  end
end
