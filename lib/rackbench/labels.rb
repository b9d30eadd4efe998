# frozen_string_literal: true

require "digest"
require "json"
require_relative "errors"
require_relative "labels/git_revision"

module Rackbench
  # What a run measured, in words: the KEY=VALUE pairs given with
  # `--label` (branch=main, pr=42, testbed=ci-box) and the git revisions of
  # what it ran, taken automatically: each app given by path that lives in
  # a git work tree, and each ruby built from source whose recipe names a
  # commit. Stored with the experiment (experiments.labels, doc/store.md)
  # and part of its identity (#fingerprint): the same experiment file run
  # at another revision, or with other labels, is another experiment of
  # the store, which is how one results directory keeps a series of runs
  # (`rackbench history`) and how a resumed run never mixes two revisions.
  #
  #   labels = Rackbench::Labels.capture(given: Labels.parse(["branch=main"]), source: experiment, variants: variants)
  #   labels.text # => "branch=main; app myapp 3f2a1b0c9d"
  class Labels
    KEY = /\A[A-Za-z0-9][A-Za-z0-9_.-]*\z/
    MAX_VALUE_CHARS = 200
    # The label that names a testbed: runs on hosts of the same hardware
    # given the same testbed are one machine to the gate and the history
    # (Report::MachineMatch).
    TESTBED = "testbed"
    # Digits of a commit the views write.
    SHORT_COMMIT = 10

    # The --label arguments ("key=value", each) as a Hash. Raises
    # UsageError naming the bad one.
    def self.parse(pairs)
      pairs.each_with_object({}) do |pair, labels|
        key, value = pair.split("=", 2)
        unless value && key.match?(KEY)
          raise UsageError, "--label takes KEY=VALUE (KEY of letters, digits, '_', '.', '-'), got '#{pair}'"
        end
        if value.empty? || value.length > MAX_VALUE_CHARS || value.match?(/[[:cntrl:]]/)
          raise UsageError, "--label #{key}: the value must be 1 to #{MAX_VALUE_CHARS} printable characters"
        end
        raise UsageError, "--label #{key} is given twice" if labels.key?(key)

        labels[key] = value
      end
    end

    # The labels of a run: +given+ (Hash, from .parse) and the revisions
    # of +source+'s apps given by path (an Experiment; a source without
    # apps has none) and of +variants+' rubies built from source (label =>
    # Rubies::Variant). :git :: reads a directory's revision (default:
    # GitRevision; tests pass a fake).
    def self.capture(given:, source:, variants:, git: GitRevision)
      apps = source.respond_to?(:apps) ? source.apps.select(&:path) : []
      revisions = apps.filter_map { |app| (found = git.of(app.path)) && { "of" => "app", "name" => app.name }.merge(found) }
      revisions += variants.filter_map { |name, variant| ruby_revision(name, variant, git: git) }
      new(given: given, revisions: revisions)
    end

    # The revision of a ruby built from a git repository: its build
    # recipe's commit (the install's #recipe, Rubies::Build::Recipe#to_h:
    # a "source" of kind git names its "path", "ref" and "commit"), with
    # the commit's date and subject when the repository is still there,
    # and the patches applied on top, or nil for any other ruby (found on
    # the machine, or built from a tarball: its version says what it is).
    def self.ruby_revision(name, variant, git: GitRevision)
      recipe = [variant, variant.install].find { |o| o.respond_to?(:recipe) && o.recipe.is_a?(Hash) }&.recipe
      return nil unless recipe

      recipe = recipe.transform_keys(&:to_s)
      source = recipe["source"].is_a?(Hash) ? recipe["source"].transform_keys(&:to_s) : {}
      commit = recipe["commit"] || source["commit"]
      return nil unless commit

      patches = Array(recipe["patches"]).filter_map { |p| p.is_a?(Hash) ? p["name"] || p[:name] : nil }
      revision = { "of" => "ruby", "name" => name.to_s, "commit" => commit.to_s, "ref" => source["ref"],
                   **git.commit_info(source["path"], commit.to_s) }.compact
      patches.empty? ? revision : revision.merge("patches" => patches)
    end

    # The Labels of a stored document (#to_h, as read back), or empty
    # ones for nil (an experiment stored without labels).
    def self.from_h(hash)
      hash ||= {}
      new(given: hash["given"] || {}, revisions: hash["revisions"] || [])
    end

    # A revision Hash in short: "app myapp 3f2a1b0c9d", with
    # "-dirty.1a2b3c" for uncommitted changes.
    def self.revision_text(revision)
      "#{revision["of"]} #{revision["name"]} #{short(revision)}"
    end

    # A revision's commit in short, with its uncommitted changes' digest
    # or the patches built on top of it.
    def self.short(revision)
      commit = revision["commit"].to_s[0, SHORT_COMMIT]
      commit += "-dirty.#{revision["diff_digest"].to_s[0, 6]}" if revision["dirty"]
      Array(revision["patches"]).each { |patch| commit += "+#{patch}" }
      commit
    end

    attr_reader :given, :revisions

    # given :: Hash of label => value
    # revisions :: Array of revision Hashes ("of", "name", "commit", ...)
    def initialize(given:, revisions:)
      @given = given.to_h { |k, v| [k.to_s.dup.freeze, v.to_s.dup.freeze] }.sort.to_h.freeze
      @revisions = revisions.map { |r| r.transform_keys(&:to_s).freeze }.freeze
      freeze
    end

    def empty? = @given.empty? && @revisions.empty?

    # The testbed the run was given (--label testbed=NAME), or nil.
    def testbed = @given[TESTBED]

    # The revision of +of+ ("app" or "ruby") named +name+, or nil.
    def revision(of, name)
      @revisions.find { |r| r["of"] == of && r["name"] == name.to_s }
    end

    # The stored document: {"given" => {...}, "revisions" => [...]}, or
    # nil when there is nothing to store.
    def to_h
      empty? ? nil : { "given" => @given, "revisions" => @revisions }
    end

    # What the labels add to an experiment's identity: +fingerprint+ (the
    # experiment's own) when there are none, so every experiment stored
    # before labels keeps its identity, else the SHA-256 of it and what
    # tells runs apart: the labels and each revision's commit and changes
    # (its date and subject follow from the commit).
    def fingerprint(fingerprint)
      return fingerprint if empty?

      identity = @revisions.map { |r| r.slice("of", "name", "commit", "diff_digest", "patches") }
                           .sort_by { |r| [r["of"], r["name"]] }
      Digest::SHA256.hexdigest("#{fingerprint}\n#{JSON.generate("given" => @given, "revisions" => identity)}")
    end

    # One line: "branch=main pr=42; app myapp 3f2a1b0c9d, ruby dev 1a2b3c4d5e",
    # "" without labels.
    def text
      given = @given.map { |k, v| "#{k}=#{v}" }.join(" ")
      revisions = @revisions.map { |r| Labels.revision_text(r) }.join(", ")
      [given, revisions].reject(&:empty?).join("; ")
    end

    # What changed from +earlier+ (Labels) to these, in words: the
    # revisions that moved ("app myapp 9c8d7e6f5a → 3f2a1b0c9d \"Cache the
    # posts page\"") and the labels that changed; [] when nothing did.
    def changes_from(earlier)
      moved = @revisions.filter_map do |r|
        before = earlier.revision(r["of"], r["name"])
        next nil if before && before.slice("commit", "diff_digest", "patches") == r.slice("commit", "diff_digest", "patches")

        subject = r["subject"].to_s.empty? ? "" : " #{r["subject"].inspect}"
        from = before ? "#{Labels.short(before)} → " : ""
        "#{r["of"]} #{r["name"]} #{from}#{Labels.short(r)}#{subject}"
      end
      relabelled = (@given.keys | earlier.given.keys).reject { |k| @given[k] == earlier.given[k] }
                                                      .map { |k| "#{k}=#{@given[k] || "(none)"}" }
      moved + relabelled
    end

    def ==(other)
      other.is_a?(Labels) && other.to_h == to_h
    end
    alias eql? ==

    def hash = to_h.hash
  end
end
