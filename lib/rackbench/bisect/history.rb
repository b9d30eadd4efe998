# frozen_string_literal: true

module Rackbench
  module Bisect
    # The commits a bisection walks: the good commit, then every commit
    # after it on the bad commit's first-parent line, up to the bad one
    # (what `git bisect --first-parent` walks). A merge is one commit of
    # the line: a regression a merged branch brought is found at its merge,
    # whose `git diff --stat` names what it brought.
    #
    #   history = History.between(Git.new("/src/ruby"), good: "v3_4_5", bad: "master")
    #   history.commits.first.sha  # the good commit
    #   history.size               # good, bad and everything between
    class History
      # One commit: its hash, its first parent's, the author and the
      # author's date (ISO 8601), and the subject.
      Commit = Struct.new(:sha, :parent, :author, :author_date, :subject, keyword_init: true) do
        def short = sha[0, Labels::SHORT_COMMIT]

        def to_h
          { "commit" => sha, "short" => short, "parent" => parent, "author" => author, "author_date" => author_date,
            "subject" => subject }
        end
      end

      # The unit separator between fields of git log's output: no subject
      # or name holds it.
      SEPARATOR = "\x1f"
      FORMAT = %w[%H %P %an %aI %s].join("%x1f")

      attr_reader :git, :commits

      # The history from +good+ to +bad+ (refs) in the repository +git+
      # works in. Raises UsageError when a ref names no commit, when they
      # name the same one, or when +good+ is not on +bad+'s first-parent
      # line (git log --first-parent BAD).
      def self.between(git, good:, bad:)
        good_sha = commit!(git, good, "--good")
        bad_sha = commit!(git, bad, "--bad")
        raise UsageError, "--good #{good} and --bad #{bad} name the same commit #{good_sha[0, 12]}" if good_sha == bad_sha
        unless git.success?("merge-base", "--is-ancestor", good_sha, bad_sha)
          raise UsageError, "--good #{good} (#{good_sha[0, 12]}) is not an ancestor of --bad #{bad} (#{bad_sha[0, 12]}): " \
                            "a bisection walks from an older good commit to a newer bad one"
        end

        after = parse(git.run!("log", "--first-parent", "--reverse", "--format=#{FORMAT}", "#{good_sha}..#{bad_sha}", "--"))
        unless after.first&.parent == good_sha
          raise UsageError, "--good #{good} (#{good_sha[0, 12]}) is not on the first-parent line of --bad #{bad} " \
                            "(git log --first-parent #{bad}): give a good commit of that line, such as the merge " \
                            "that brought it"
        end

        base = parse(git.run!("log", "-1", "--format=#{FORMAT}", good_sha, "--"))
        new(git, base + after)
      end

      def self.commit!(git, ref, option)
        git.commit(ref)
      rescue Git::Failed => e
        raise UsageError, "#{option} #{ref}: #{e.message}"
      end
      private_class_method :commit!

      # Commits of `git log --format=FORMAT`'s output.
      def self.parse(text)
        text.lines.map(&:chomp).reject(&:empty?).map do |line|
          sha, parents, author, date, subject = line.split(SEPARATOR, 5)
          Commit.new(sha: sha, parent: parents.to_s.split.first, author: author, author_date: date,
                     subject: subject.to_s).freeze
        end
      end

      def initialize(git, commits)
        @git = git
        @commits = commits.freeze
        freeze
      end

      def size = @commits.size
      def [](index) = @commits[index]
      def good = @commits.first
      def bad = @commits.last

      # The index of the commit whose hash is +sha+, or nil.
      def index(sha)
        @commits.index { |c| c.sha == sha }
      end

      # `git diff --stat` of +commit+ against +base+ (a Commit each;
      # default: its first parent), its last line first: "3 files
      # changed, 12 insertions(+), 2 deletions(-)", then the files.
      def diff_stat(commit, base = nil)
        text = @git.run!("diff", "--stat=100", "#{base&.sha || commit.parent}", commit.sha, "--")
        lines = text.lines.map(&:rstrip).reject(&:empty?)
        { "summary" => lines.last.to_s.strip, "files" => lines[0...-1].map(&:strip) }
      end
    end
  end
end
