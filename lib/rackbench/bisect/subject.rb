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
    # repository :: the git work tree's top directory (a ruby's may be a bare repository)
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

      # Every ruby built from a git repository (its work tree's top
      # directory, or a bare repository: a mirror, as the nightly example
      # keeps) and every app given by path inside a git work tree, in the
      # file's order.
      def self.candidates(experiment)
        rubies = experiment.rubies.filter_map do |ruby|
          next nil unless ruby.build

          path = ruby.build.source.path
          next nil unless File.directory?(path)

          git = Git.new(path)
          top = git.toplevel
          top = nil unless top == File.realpath(path)
          top ||= git.bare_directory
          new(kind: "ruby", name: ruby.label, repository: top, subdir: "") if top
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
      # the subject's entry once per checkout, relabelled, and with it
      # each variant of the walked ruby (an entry whose `ruby:` names it,
      # as `{ name: master-yjit, ruby: master, options: [--yjit] }`: the
      # same build, run its own way); the other entries of its list left
      # out (what stays fixed is the other dimensions), and the file's
      # excludes kept for the labels given.
      def changes(data, checkouts)
        list_key = @kind == "ruby" ? "rubies" : "apps"
        entry = entry(data)
        variants = variants(data)
        entries = checkouts.flat_map do |label, sha, dir|
          copy = Marshal.load(Marshal.dump(entry))
          copy["name"] = label
          ruby? ? (copy["build"] = copy["build"].merge("ref" => sha)) : (copy["path"] = dir)
          # Copies: the derived file is written as YAML, where a shared object would be an alias.
          [copy, *variants.map { |v| Marshal.load(Marshal.dump(v)).merge("name" => variant_label(v["name"], label), "ruby" => label) }]
        end
        labels = { @name => checkouts.map(&:first) }
        variants.each { |v| labels[v["name"]] = checkouts.map { |label, _| variant_label(v["name"], label) } }
        { list_key => entries, "exclude" => excludes(data["exclude"], labels) }
      end

      # The labels this subject's entries take in a run of two commits
      # (Derivation#confirm_experiment), the later commit's => the
      # earlier's: the subject's and each of its variants'.
      def paired_labels(data, earlier_sha, later_sha)
        earlier = label_at(earlier_sha)
        later = label_at(later_sha)
        pairs = { later => earlier }
        variants(data).each { |v| pairs[variant_label(v["name"], later)] = variant_label(v["name"], earlier) }
        pairs
      end

      private

      def entry(data)
        list_key = @kind == "ruby" ? "rubies" : "apps"
        found = Array(data[list_key]).find { |item| item.is_a?(Hash) && item["name"].to_s == @name }
        raise ConfigError, "#{list_key}: no entry named '#{@name}' in the file" unless found

        found
      end

      # The file's entries that are variants of the walked ruby (their
      # `ruby:` names it, and they build nothing of their own).
      def variants(data)
        return [] unless ruby?

        Array(data["rubies"]).select { |item| item.is_a?(Hash) && item["ruby"].to_s == @name && !item["build"] }
      end

      # A variant's label in a run whose subject is labelled +label+: its
      # own when the subject keeps its name, else its name with the
      # commit the label carries ("master-yjit-1a2b3c4d5e").
      def variant_label(name, label)
        label == @name ? name.to_s : "#{name}#{label.delete_prefix(@name)}"
      end

      # The file's excludes for a run whose entries are +labels+ (the
      # file's name => the names in the run): an exclude naming this
      # dimension keeps the entries that named the subject or its
      # variants (now named by their labels) and goes when it named only
      # the other entries, which the run leaves out. nil when none is left.
      def excludes(list, labels)
        kept = Array(list).filter_map do |item|
          next item unless item.is_a?(Hash) && item.key?(@kind)

          named = Array(item[@kind]).map(&:to_s).flat_map { |name| labels.fetch(name, []) }
          next nil if named.empty?

          item.merge(@kind => named.size == 1 ? named.first : named)
        end
        kept.empty? ? nil : kept
      end
    end
  end
end
