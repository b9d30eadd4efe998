# frozen_string_literal: true

require "digest"
require "fileutils"
require "find"

module Rackbench
  module Rubies
    module Build
      # Where a ruby's source comes from, and what identifies it: a release
      # tarball (its SHA-256), a git repository at a commit (the commit a
      # ref names, resolved when the recipe is keyed, so a moving branch
      # keys a new build), or an unpacked tree (the SHA-256 of every file's
      # path, mode and content). Unpacking never builds in the user's own
      # directory: the source is copied out first.
      class Source
        TARBALL = /\.(tar(\.(gz|xz|bz2|zst))?|tgz|tbz2?|txz)\z/.freeze
        GIT_TIMEOUT_S = 120

        attr_reader :path, :ref

        # path :: absolute path of a tarball, a tree or a git repository
        # ref :: a commit, tag or branch of the git repository at path, or nil
        def initialize(path, ref: nil)
          @path = path.dup.freeze
          @ref = ref&.dup&.freeze
        end

        # :tarball, :git or :tree. Raises ConfigError naming what is wrong
        # with the source (missing, a file that is no tarball, a ref on a
        # source that is not a git repository).
        def kind
          raise ConfigError, "source #{path}: no such file or directory" unless File.exist?(path)

          if File.file?(path)
            raise ConfigError, "source #{path}: a ref needs a git repository, not a tarball" if ref
            raise ConfigError, "source #{path}: not a tarball (.tar.gz, .tar.xz, .tar.bz2) or a directory" \
              unless File.basename(path).match?(TARBALL)

            return :tarball
          end
          return :git if ref && git_repository?
          raise ConfigError, "source #{path}: ref #{ref} needs a git repository, and #{path} is not one" if ref

          :tree
        end

        # What identifies the source, for the build's key and its record:
        # { "kind", "path", and "sha256" or "commit" (with the "ref" given) }.
        # Raises ConfigError when a ref names no commit.
        def identity
          @identity ||= case kind
                        when :tarball then { "kind" => "tarball", "path" => path, "sha256" => file_digest(path) }
                        when :git then { "kind" => "git", "path" => path, "ref" => ref, "commit" => commit }
                        else { "kind" => "tree", "path" => path, "sha256" => tree_digest }
                        end.freeze
        end

        # Copies the source into dir (which must be empty), as the tree the
        # build configures: a tarball unpacked without its top directory,
        # a git commit exported (`git archive`, so nothing uncommitted),
        # a tree copied (its .git left out). log receives the commands'
        # output. Raises SetupError.
        def unpack_into(dir, log:)
          case kind
          when :tarball then run!(["tar", "-xf", path, "-C", dir, "--strip-components=1"], log, "unpack #{path}")
          when :git
            archive = File.join(File.dirname(dir), "source.tar")
            run!(["git", "-C", path, "archive", "--format=tar", "-o", archive, identity.fetch("commit")], log,
                 "export #{path} at #{ref}")
            run!(["tar", "-xf", archive, "-C", dir], log, "unpack the export of #{path}")
            FileUtils.rm_f(archive)
          else
            run!(["cp", "-a", "#{path}/.", dir], log, "copy #{path}")
            FileUtils.rm_rf(File.join(dir, ".git"))
          end
        end

        # A short text for progress lines: the tarball's name, the
        # repository and its commit, or the tree.
        def to_s
          case identity["kind"]
          when "git" then "#{File.basename(path)} at #{ref} (#{identity["commit"][0, 12]})"
          else File.basename(path)
          end
        end

        private

        def git_repository?
          File.exist?(File.join(path, ".git")) || (File.directory?(File.join(path, "objects")) && File.file?(File.join(path, "HEAD")))
        end

        def commit
          result = Child.run(["git", "-C", path, "rev-parse", "--verify", "--quiet", "#{ref}^{commit}"],
                             env: CleanEnv.clean(ENV), timeout_s: GIT_TIMEOUT_S)
          sha = result.output.to_s.strip
          raise ConfigError, "source #{path}: ref #{ref} names no commit of that repository" \
            unless result.success? && sha.match?(/\A\h{40}\z/)

          sha
        end

        def file_digest(file)
          Digest::SHA256.file(file).hexdigest
        end

        # Every regular file and symlink under the tree but .git, in sorted
        # order: its relative path, whether it is executable, and its
        # content (a symlink: its target), so a tree built in place keys a
        # new build (build products are files too).
        def tree_digest
          digest = Digest::SHA256.new
          entries = []
          Find.find(path) do |file|
            if File.basename(file) == ".git"
              Find.prune
            elsif File.symlink?(file) || File.file?(file)
              entries << file
            end
          end
          entries.sort.each do |file|
            relative = file.delete_prefix("#{path}/")
            if File.symlink?(file)
              digest << "L #{relative}\0#{File.readlink(file)}\0"
            else
              digest << "#{File.executable?(file) ? "X" : "F"} #{relative}\0#{file_digest(file)}\0"
            end
          end
          digest.hexdigest
        end

        def run!(argv, log, what)
          result = Child.run(argv, env: CleanEnv.clean(ENV), timeout_s: 600, log_path: log)
          return if result.success?

          raise SetupError, "cannot #{what}: `#{argv.join(" ")}` #{result.timed_out ? "timed out" : "failed"} (log: #{log})"
        end
      end
    end
  end
end
