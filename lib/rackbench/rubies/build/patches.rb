# frozen_string_literal: true

module Rackbench
  module Rubies
    module Build
      # Applies a recipe's patches to an unpacked source, in order, with
      # `patch -p1` (the form `git diff` and `git format-patch` write). Each
      # patch is first tried with --dry-run, so one that does not apply
      # leaves the tree as the patches before it made it, and the error says
      # which patch and which file: the first thing a developer rebasing a
      # patch onto another release needs to know.
      module Patches
        TIMEOUT_S = 120

        # Applies patches (absolute paths) in dir; log receives patch's
        # output. Raises BuildError (one line: the patch, the file and the
        # hunks that failed) for a patch that does not apply.
        def self.apply(patches, dir:, log:, env:, ruby:)
          patches.each do |patch|
            argv = ["patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch", "-i", patch]
            File.write(log, "# #{argv.join(" ")} (dry run)\n", mode: "a")
            dry = Child.run([*argv, "--dry-run"], env: env, timeout_s: TIMEOUT_S, chdir: dir)
            File.write(log, dry.output.to_s, mode: "a")
            raise BuildError, "ruby '#{ruby}' build: #{failure(patch, dry.output)} (log: #{log})" unless dry.success?

            File.write(log, "# #{argv.join(" ")}\n", mode: "a")
            result = Child.run(argv, env: env, timeout_s: TIMEOUT_S, chdir: dir, log_path: log)
            raise BuildError, "ruby '#{ruby}' build: patch #{File.basename(patch)} failed (log: #{log})" unless result.success?
          end
        end

        # "patch malloc-trim.patch does not apply to gc.c (hunk #1 FAILED at 1234)", from
        # patch's output: the file it was patching when a hunk failed, or the
        # file it could not find.
        def self.failure(patch, output)
          lines = output.to_s.lines.map(&:strip)
          name = File.basename(patch)
          current = nil
          failed = []
          lines.each do |line|
            if (m = line.match(/\Achecking file (.+)\z/) || line.match(/\Apatching file (.+)\z/))
              break unless failed.empty?

              current = m[1]
            elsif line.match?(/\AHunk #\d+ FAILED/)
              failed << line.sub(/\.\z/, "")
            elsif line.include?("Reversed (or previously applied) patch detected")
              return "patch #{name} is already applied to #{current || "the source"} (or reversed)"
            elsif (m = line.match(/can't find file to patch at input line \d+/))
              return "patch #{name} names a file the source does not have (#{m[0]}; is it a -p1 patch of Ruby's tree?)"
            elsif line.match?(/\AOnly garbage was found in the patch input/)
              return "patch #{name} is not a patch (only garbage was found in it)"
            end
          end
          return "patch #{name} does not apply to #{current} (#{failed.join(", ")})" if current && !failed.empty?

          last = lines.reject(&:empty?).last
          "patch #{name} does not apply#{": #{last}" if last}"
        end
      end
    end
  end
end
