# frozen_string_literal: true

module Rackbench
  module Rubies
    # Lists the interpreter executables that may be rubies, without running
    # any of them: the commands on PATH, the installs of the usual version
    # managers, and paths given explicitly. Pure file-system lookups, so
    # tests point it at a temporary home.
    class Locator
      # What a candidate is called when found on PATH.
      PATH_COMMANDS = %w[ruby jruby truffleruby].freeze
      # The executable inside an install directory (bin/ruby first: JRuby
      # and TruffleRuby installs from ruby-build have it as a symlink).
      INSTALL_EXECUTABLES = %w[ruby jruby truffleruby].freeze

      # path :: the executable as found (not yet resolved)
      # source :: Symbol, see Install#source
      # command :: the PATH command name ("ruby"), or nil for installs
      Candidate = Struct.new(:path, :source, :command, keyword_init: true) do
        def real_path
          File.realpath(path)
        rescue SystemCallError
          path
        end
      end

      # :env :: environment with PATH and the managers' root variables
      # :home :: the home directory
      def initialize(env:, home:)
        @env = env
        @home = home
      end

      # Candidates in discovery order, deduplicated by real path (the first
      # one found keeps its source).
      def candidates(extra_paths: [])
        list = path_candidates + manager_candidates + explicit_candidates(extra_paths)
        list.uniq(&:real_path)
      end

      # [source, directory holding one install per subdirectory] pairs.
      def manager_roots
        data_home = @env["XDG_DATA_HOME"] || File.join(@home, ".local/share")
        [
          [:rbenv, File.join(@env["RBENV_ROOT"] || File.join(@home, ".rbenv"), "versions")],
          [:chruby, File.join(@home, ".rubies")],
          [:chruby, "/opt/rubies"],
          [:asdf, File.join(@env["ASDF_DATA_DIR"] || File.join(@home, ".asdf"), "installs/ruby")],
          [:mise, File.join(@env["MISE_DATA_DIR"] || File.join(data_home, "mise"), "installs/ruby")],
          [:rvm, File.join(@env["rvm_path"] || File.join(@home, ".rvm"), "rubies")]
        ]
      end

      private

      def path_candidates
        dirs = @env["PATH"].to_s.split(File::PATH_SEPARATOR).reject(&:empty?)
        PATH_COMMANDS.filter_map do |command|
          found = dirs.map { |dir| File.join(dir, command) }.find { |path| executable_file?(path) }
          Candidate.new(path: found, source: :path, command: command) if found
        end
      end

      def manager_candidates
        manager_roots.flat_map do |source, root|
          Dir.glob(File.join(root, "*")).sort.filter_map do |dir|
            exe = executable_in(dir)
            Candidate.new(path: exe, source: source) if exe
          end
        end
      end

      # An explicit path may name the interpreter or its install directory.
      # One that does not exist is kept, so the probe reports it.
      def explicit_candidates(paths)
        paths.map do |path|
          path = File.expand_path(path.to_s)
          Candidate.new(path: File.directory?(path) ? executable_in(path) || path : path, source: :explicit)
        end
      end

      def executable_in(dir)
        INSTALL_EXECUTABLES.map { |name| File.join(dir, "bin", name) }.find { |path| executable_file?(path) }
      end

      def executable_file?(path)
        File.file?(path) && File.executable?(path)
      end
    end
  end
end
