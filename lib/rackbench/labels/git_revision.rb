# frozen_string_literal: true

require "digest"
require "open3"

module Rackbench
  class Labels
    # The git revision a directory is at, read with git itself (never by
    # parsing .git): the commit of HEAD, its date and subject, and whether
    # the files git tracks under the directory differ from it.
    #
    #   Labels::GitRevision.of("/src/myapp")
    #   # => {"commit" => "3f2a1b0c...", "committed_at" => "2026-11-28T10:02:11+00:00",
    #   #     "subject" => "Cache the posts page", "dirty" => false}
    #
    # Only tracked files count as changes: what a run writes into the app
    # (logs, a database, tmp/) is untracked or ignored in any app under
    # git, and must not make the revision of a resumed run another one.
    # A changed tracked file gives "dirty" => true and "diff_digest", the
    # first 12 hex digits of the SHA-256 of `git diff HEAD` under the
    # directory: two different edits of one commit are two revisions.
    module GitRevision
      # What every git command runs with: no optional lock (git status may
      # otherwise refresh the index of a repository someone is using), and
      # messages in one language.
      GIT_ENV = { "GIT_OPTIONAL_LOCKS" => "0", "LC_ALL" => "C" }.freeze
      DIGEST_HEX_CHARS = 12

      module_function

      # The revision of +dir+ as a Hash (String keys, above), or nil when
      # +dir+ is not in a git work tree with a commit, or git is not
      # installed: then the run has no revision to name, which is no error.
      def of(dir)
        return nil unless File.directory?(dir)

        commit = git(dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")&.strip
        return nil if commit.nil? || commit.empty?

        changed = git(dir, "status", "--porcelain", "--untracked-files=no", "--", ".").to_s
        revision = { "commit" => commit, **commit_info(dir, commit), "dirty" => !changed.empty? }
        return revision if changed.empty?

        diff = git(dir, "diff", "HEAD", "--binary", "--", ".").to_s
        revision.merge("diff_digest" => Digest::SHA256.hexdigest(diff)[0, DIGEST_HEX_CHARS])
      end

      # {"committed_at", "subject"} of +commit+ in the repository at +dir+,
      # or {} when git cannot say (the repository moved, git is missing).
      def commit_info(dir, commit)
        out = File.directory?(dir.to_s) ? git(dir, "log", "-1", "--format=%cI%x00%s", commit, "--") : nil
        return {} if out.nil? || out.empty?

        date, subject = out.chomp.split("\0", 2)
        { "committed_at" => date, "subject" => subject.to_s }
      end

      # git's standard output, or nil when it failed or is missing.
      def git(dir, *args)
        out, _err, status = Open3.capture3(GIT_ENV, "git", "-C", dir, *args)
        status.success? ? out : nil
      rescue SystemCallError
        nil
      end
    end
  end
end
