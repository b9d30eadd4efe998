# frozen_string_literal: true

module Rackbench
  module Bisect
    # What a bisection walks the history of: one ruby of the experiment
    # built from a git repository (`build: { source: DIR }`), or one app
    # given by `path:` in a git work tree. Found in the experiment
    # (Subject.find), and written into each step's file: the ruby's
    # `build.ref` set to the commit, or the app's `path` set to the
    # commit's worktree (Worktrees).
    #
    # kind :: "ruby" or "app" (the dimension it is)
    # name :: the entry's label in the file
    # repository :: the git work tree's top directory
    # subdir :: where the app lies inside it ("" at its top; "" for a ruby)
    class Subject
      KINDS = %w[ruby app].freeze

      attr_reader :kind, :name, :repository, :subdir

      # The Subject of +experiment+ that +over+ ([kind, name] from
      # Settings.over_parts, or nil) names. Raises UsageError when the
      # experiment has none, or several and +over+ does not choose.
      def self.find(experiment, over: nil)
        kind, name = over
        found = candidates(experiment)
        chosen = found.select { |s| (kind.nil? || s.kind == kind) && (name.nil? || s.name == name) }
        return chosen.first if chosen.size == 1

        listed = found.map(&:describe).join(", ")
        if found.empty?
          raise UsageError, "#{experiment.source} has no history to bisect: bisect walks the commits of one ruby built " \
                            "from a git repository (build: { source: DIR }) or of one app given by path: in a git " \
                            "work tree"
        elsif chosen.empty?
          raise UsageError, "--over #{[kind, name].compact.join("=")}: #{experiment.source} has no such history " \
                            "(histories: #{listed})"
        end
        raise UsageError, "#{experiment.source} has several histories to bisect (#{listed}): choose one with " \
                          "--over #{chosen.map(&:over_text).join(" or --over ")}"
      end

      # Every ruby built from a git repository's top directory and every
      # app given by path inside a git work tree, in the file's order.
      def self.candidates(experiment)
        rubies = experiment.rubies.filter_map do |ruby|
          next nil unless ruby.build

          path = ruby.build.source.path
          top = File.directory?(path) && Git.new(path).toplevel
          new(kind: "ruby", name: ruby.label, repository: top, subdir: "") if top && top == File.realpath(path)
        end
        apps = experiment.apps.filter_map do |app|
          next nil unless app.path

          top = Git.new(app.path).toplevel
          next nil unless top

          subdir = File.realpath(app.path).delete_prefix(top).delete_prefix("/")
          new(kind: "app", name: app.name, repository: top, subdir: subdir)
        end
        rubies + apps
      end

      def initialize(kind:, name:, repository:, subdir:)
        raise ArgumentError, "kind must be one of #{KINDS.join(", ")}" unless KINDS.include?(kind)

        @kind = kind
        @name = name
        @repository = repository
        @subdir = subdir
        freeze
      end

      def ruby? = @kind == "ruby"
      def app? = @kind == "app"

      # "ruby 'dev' (/src/ruby)"
      def describe
        "#{@kind} '#{@name}' (#{File.join(@repository, @subdir).chomp("/")})"
      end

      # What --over says to choose it: "app=myapp".
      def over_text
        "#{@kind}=#{@name}"
      end

      # The label of the entry at +commit+ in a run of two commits (the
      # confirmation's): "dev-1a2b3c4d5e".
      def label_at(commit_sha)
        "#{@name}-#{commit_sha[0, Labels::SHORT_COMMIT]}"
      end

      # The file's changes (Experiment#derive) that make +data+ (the
      # file's parsed tree) run this subject at each of +checkouts+: pairs
      # of [label, commit sha, app directory (an app's, nil for a ruby)]:
      # the subject's entry once per checkout, relabelled, the other
      # entries of its list left out (what stays fixed is the other
      # dimensions), and the file's excludes kept for the labels given.
      def changes(data, checkouts)
        list_key = @kind == "ruby" ? "rubies" : "apps"
        entry = Array(data[list_key]).find { |item| item.is_a?(Hash) && item["name"].to_s == @name }
        raise ConfigError, "#{list_key}: no entry named '#{@name}' in the file" unless entry

        entries = checkouts.map do |label, sha, dir|
          copy = Marshal.load(Marshal.dump(entry))
          copy["name"] = label
          ruby? ? (copy["build"] = copy["build"].merge("ref" => sha)) : (copy["path"] = dir)
          copy
        end
        { list_key => entries, "exclude" => excludes(data["exclude"], checkouts.map(&:first)) }
      end

      private

      # The file's excludes for a run whose subject entries are +labels+:
      # an exclude naming this dimension keeps the entries that named this
      # subject (now named by its labels) and goes when it named only the
      # other entries, which the run leaves out. nil when none is left.
      def excludes(list, labels)
        kept = Array(list).filter_map do |item|
          next item unless item.is_a?(Hash) && item.key?(@kind)

          named = Array(item[@kind]).map(&:to_s)
          next nil unless named.include?(@name)

          item.merge(@kind => labels.size == 1 ? labels.first : labels)
        end
        kept.empty? ? nil : kept
      end
    end
  end
end
