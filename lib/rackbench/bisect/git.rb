# frozen_string_literal: true

require "open3"

module Rackbench
  module Bisect
    # git itself, run in a repository: the commands a bisection needs
    # (rev-parse, rev-list, log, diff, worktree), with git's own message in
    # the error when one fails. Never a shell; messages in one language;
    # no optional lock taken on a repository someone is using.
    class Git
      ENV_VARS = Labels::GitRevision::GIT_ENV

      # A git command failed: the message names the command, the
      # repository and git's first line of error.
      class Failed < Error; end

      attr_reader :dir

      # dir :: a directory inside the repository (its work tree or a subdirectory)
      def initialize(dir)
        @dir = dir
      end

      # git's standard output of +args+; raises Failed with git's message.
      def run!(*args)
        out, err, status = Open3.capture3(ENV_VARS, "git", "-C", @dir, *args)
        return out if status.success?

        first = err.lines.map(&:strip).reject(&:empty?).first || "exit status #{status.exitstatus}"
        raise Failed, "git #{args.first(2).join(" ")} in #{@dir}: #{first}"
      rescue SystemCallError => e
        raise Failed, "cannot run git in #{@dir}: #{e.message}"
      end

      # Whether +args+ succeed (git's exit status 0).
      def success?(*args)
        _out, _err, status = Open3.capture3(ENV_VARS, "git", "-C", @dir, *args)
        status.success?
      rescue SystemCallError
        false
      end

      # The top directory of the work tree, or nil when +dir+ is in none.
      def toplevel
        return nil unless File.directory?(@dir)

        out, _err, status = Open3.capture3(ENV_VARS, "git", "-C", @dir, "rev-parse", "--show-toplevel")
        status.success? ? File.realpath(out.strip) : nil
      rescue SystemCallError
        nil
      end

      # The directory of the bare repository +dir+ is (a mirror: `git
      # clone --mirror`), or nil when it is not one's top.
      def bare_directory
        return nil unless File.directory?(@dir)

        out, _err, status = Open3.capture3(ENV_VARS, "git", "-C", @dir, "rev-parse", "--is-bare-repository",
                                           "--absolute-git-dir")
        bare, git_dir = out.lines.map(&:strip)
        return nil unless status.success? && bare == "true" && git_dir

        File.realpath(git_dir) == File.realpath(@dir) ? File.realpath(@dir) : nil
      rescue SystemCallError
        nil
      end

      # The commit +ref+ names (40 hex digits); raises Failed naming the ref.
      def commit(ref)
        out, _err, status = Open3.capture3(ENV_VARS, "git", "-C", @dir, "rev-parse", "--verify", "--quiet",
                                           "#{ref}^{commit}")
        sha = out.strip
        raise Failed, "#{ref} names no commit of the repository #{@dir}" unless status.success? && sha.match?(/\A\h{40}\z/)

        sha
      end
    end
  end
end
