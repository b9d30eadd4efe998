# frozen_string_literal: true

require "json"

module Rackbench
  module Rubies
    # Runs lib/rackbench/rubies/probe_script.rb under a candidate interpreter and
    # turns what it prints into an Install. Never raises for a broken ruby:
    # the Install carries the reason in #error instead.
    class Prober
      SCRIPT = File.expand_path("probe_script.rb", __dir__)
      MARKER = "RACKBENCH_PROBE "
      # Enough of the output to explain a failure in one line.
      REASON_MAX_CHARS = 200

      # :env :: the parent environment; leaks are removed (see CleanEnv)
      # :timeout_s :: how long the probe may take
      def initialize(env:, timeout_s:)
        @env = CleanEnv.clean(env)
        @timeout_s = timeout_s
      end

      # An Install for a Locator::Candidate (or anything with #path,
      # #source and #command).
      def describe(candidate)
        return broken(candidate, "is a directory without bin/ruby") if File.directory?(candidate.path)

        # The command is passed on, for the probe's YJIT check to run it again.
        result = Child.run([candidate.path, SCRIPT, candidate.path], env: @env, timeout_s: @timeout_s)
        return broken(candidate, "timed out after #{format("%g", @timeout_s)} s") if result.timed_out

        info = parse(result.output)
        return broken(candidate, failure(result)) unless result.status.success? && info

        install(candidate, info)
      rescue SystemCallError => e
        broken(candidate, "cannot run: #{e.message.sub(/ @ \w+/, "")}")
      end

      private

      def parse(output)
        line = output.to_s.lines.reverse_each.find { |l| l.start_with?(MARKER) }
        info = line && JSON.parse(line.delete_prefix(MARKER))
        info if info.is_a?(Hash) && info["engine"] && info["version"]
      rescue JSON::ParserError
        nil
      end

      def failure(result)
        last = result.output.to_s.lines.map(&:strip).reject(&:empty?).last.to_s[0, REASON_MAX_CHARS]
        status = result.status
        why = if status.signaled? then "killed by signal #{Signal.signame(status.termsig)}"
              elsif !status.success? then "exited with status #{status.exitstatus}"
              else "printed no description"
              end
        last.empty? ? why : "#{why}: #{last}"
      end

      def install(candidate, info)
        engine = info["engine"].to_s
        version = info["version"].to_s
        executable = real_path(info["executable"])
        # A probe without /proc (or an older probe) reports no exe: then
        # RbConfig.ruby is the best account of what ran.
        exe = real_path(info["exe"]) || executable
        Install.new(
          name: candidate.command || "#{engine}-#{version}",
          path: exec_path(candidate, engine, exe, executable),
          exe: exe, libruby: info["libruby"]&.to_s,
          source: candidate.source, engine: engine, version: version,
          ruby_version: info["ruby_version"], abi_version: info["abi_version"],
          description: info["description"], platform: info["platform"], jit: Array(info["jit"]),
          bundler_version: info["bundler_version"], bundler_bin: info["bundler_bin"]
        )
      end

      # The file rackbench will exec for this candidate.
      #
      # A ruby named by path (:explicit) runs as itself: a relocated build,
      # a copy or a wrapper script is that file, whatever RbConfig.ruby it
      # reports or whatever it execs. So does a ruby rackbench built
      # (:build): its own bin/ruby.
      #
      # A ruby found through PATH or a version manager may be a shim (rbenv
      # and asdf shims are scripts, mise's a symlink to mise) that picks a
      # ruby by the current directory's .ruby-version; the server runs in
      # the app's directory, where it could pick another, so the candidate
      # stands for the interpreter that ran the probe. For CRuby that is the
      # process image (exe), which is the found file itself when that is
      # already the interpreter. JRuby's and TruffleRuby's process image is
      # the JVM or an internal binary that cannot be run as a ruby: their
      # launcher is RbConfig.ruby, which they compute from where they are
      # installed (not fixed at build time as CRuby's is).
      def exec_path(candidate, engine, exe, executable)
        return candidate.real_path if %i[explicit build].include?(candidate.source)

        (engine == "ruby" ? exe : executable) || candidate.real_path
      end

      def real_path(path)
        File.realpath(path) if path
      rescue SystemCallError
        nil
      end

      # A broken ruby is named after its command, its install directory
      # (rbenv's "3.0.0") or, given explicitly, its path.
      def broken(candidate, reason)
        name = candidate.command ||
               (candidate.source == :explicit ? candidate.path : File.basename(File.dirname(File.dirname(candidate.path))))
        Install.new(name: name, path: candidate.real_path, source: candidate.source, error: reason)
      end
    end
  end
end
