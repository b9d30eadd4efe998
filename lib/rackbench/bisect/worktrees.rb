# frozen_string_literal: true

require "fileutils"

module Rackbench
  module Bisect
    # The app's commits checked out for a bisection, each in a git worktree
    # of its own (`git worktree add --detach`) under the results
    # directory: the user's working copy is never touched, what each step
    # runs is exactly the commit (a worktree is a git work tree, so the
    # run's labels name its commit and see any change made to it), and an
    # interrupted bisection finds them again. Removed when the bisection
    # ends (#remove_all); a worktree left by a killed run is checked and
    # reused, or made again.
    #
    #   trees = Worktrees.new(git: Git.new("/src/myapp"), root: "rackbench-results/bisect-worktrees/bench")
    #   trees.checkout(commit_sha) # => ".../bisect-worktrees/bench/1a2b3c4d5e6f"
    class Worktrees
      DIGITS = 12

      attr_reader :root

      # :git :: the repository's Git
      # :root :: the directory the worktrees go under (made when needed)
      def initialize(git:, root:)
        @git = git
        @root = File.expand_path(root)
      end

      # The worktree of +sha+ (made, or found at that commit), its path,
      # its tracked files as the commit has them: an app's setup that
      # rewrote one (db/schema.rb) in an earlier run would make the run's
      # revision another one (Labels: "dirty"), and the stored steps would
      # not be found again. What the commit does not track (a database,
      # logs, tmp/) stays. Raises Git::Failed when git cannot make it.
      def checkout(sha)
        path = File.join(@root, sha[0, DIGITS])
        if at?(path, sha)
          Git.new(path).run!("reset", "--hard", "--quiet", sha)
          return path
        end

        discard(path)
        FileUtils.mkdir_p(@root)
        @git.run!("worktree", "add", "--detach", "--force", path, sha)
        path
      end

      # Removes every worktree under root (and root itself); git forgets
      # them. Returns how many there were.
      def remove_all
        return 0 unless File.directory?(@root)

        paths = Dir.children(@root).map { |name| File.join(@root, name) }
        paths.each { |path| discard(path) }
        FileUtils.rm_rf(@root)
        @git.success?("worktree", "prune")
        paths.size
      end

      private

      def at?(path, sha)
        File.directory?(path) && Git.new(path).success?("rev-parse", "--verify", "--quiet", "HEAD") &&
          Git.new(path).run!("rev-parse", "HEAD").strip == sha
      rescue Git::Failed
        false
      end

      # A worktree removed through git (its administrative files too), or
      # a directory that is none removed; then git forgets worktrees whose
      # directory is gone (a killed run's).
      def discard(path)
        @git.success?("worktree", "remove", "--force", "--force", path) if File.directory?(path)
        FileUtils.rm_rf(path)
        @git.success?("worktree", "prune")
      end
    end
  end
end
