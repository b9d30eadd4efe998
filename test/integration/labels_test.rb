# frozen_string_literal: true

require "test_helper"
require "open3"

# Labels: the --label pairs, the git revisions taken automatically (a real
# repository in a temporary directory: git is what the runner calls), the
# identity they add to an experiment, and their place in the store.
describe Rackbench::Labels do
  let(:dir) { Dir.mktmpdir("rackbench-labels") }
  after { FileUtils.rm_rf(dir) }

  def git(*args)
    env = { "GIT_AUTHOR_NAME" => "t", "GIT_AUTHOR_EMAIL" => "t@example.org", "GIT_COMMITTER_NAME" => "t",
            "GIT_COMMITTER_EMAIL" => "t@example.org" }
    out, status = Open3.capture2e(env, "git", "-C", dir, *args)
    assert status.success?, out
    out
  end

  def commit(message, files)
    files.each { |name, text| File.write(File.join(dir, name), text) }
    git("add", "-A")
    git("commit", "-q", "-m", message)
    git("rev-parse", "HEAD").strip
  end

  describe ".parse" do
    it "takes KEY=VALUE pairs, the value may hold '='" do
      assert_equal({ "branch" => "main", "q" => "a=b" }, Rackbench::Labels.parse(["branch=main", "q=a=b"]))
      assert_equal({}, Rackbench::Labels.parse([]))
    end

    it "refuses what is not a label, in one line naming it" do
      { "branch" => /got 'branch'/, "=x" => /got '=x'/, "a b=c" => /got 'a b=c'/, "k=" => /k: the value must be/,
        "k=#{"x" * 201}" => /1 to 200 printable/, "k=a\nb" => /printable/ }.each do |pair, message|
        error = assert_raises(Rackbench::UsageError) { Rackbench::Labels.parse([pair]) }
        assert_match message, error.message
      end
      assert_match(/given twice/, assert_raises(Rackbench::UsageError) { Rackbench::Labels.parse(%w[a=1 a=2]) }.message)
    end
  end

  describe "GitRevision" do
    before { git("init", "-q") }

    it "names the commit, its date and subject; clean until a tracked file changes" do
      sha = commit("First version", "config.ru" => "run ->(_) { [200, {}, ['1']] }\n")
      revision = Rackbench::Labels::GitRevision.of(dir)
      assert_equal({ "commit" => sha, "subject" => "First version", "dirty" => false },
                   revision.slice("commit", "subject", "dirty"))
      assert_match(/\A\d{4}-\d\d-\d\dT/, revision["committed_at"])

      File.write(File.join(dir, "log.txt"), "what a run writes, untracked")
      assert_equal revision, Rackbench::Labels::GitRevision.of(dir), "untracked files are not a change"

      File.write(File.join(dir, "config.ru"), "run ->(_) { [200, {}, ['2']] }\n")
      dirty = Rackbench::Labels::GitRevision.of(dir)
      assert_equal [sha, true], dirty.values_at("commit", "dirty")
      assert_match(/\A\h{12}\z/, dirty["diff_digest"])
      File.write(File.join(dir, "config.ru"), "run ->(_) { [200, {}, ['3']] }\n")
      refute_equal dirty["diff_digest"], Rackbench::Labels::GitRevision.of(dir)["diff_digest"], "another edit, another revision"
    end

    it "reads the revision of a subdirectory as its repository's, counting only its own changes" do
      sha = commit("Two apps", "README" => "x\n")
      FileUtils.mkdir_p(File.join(dir, "app"))
      File.write(File.join(dir, "app", "config.ru"), "run 1\n")
      git("add", "-A")
      git("commit", "-q", "-m", "App")
      refute_equal sha, (app = Rackbench::Labels::GitRevision.of(File.join(dir, "app")))["commit"]
      File.write(File.join(dir, "README"), "changed\n")
      assert_equal app, Rackbench::Labels::GitRevision.of(File.join(dir, "app")), "a change outside the app is not the app's"
    end

  end

  it "has no git revision outside a git work tree, nor in a repository without a commit" do
    assert_nil Rackbench::Labels::GitRevision.of(dir)
    git("init", "-q")
    assert_nil Rackbench::Labels::GitRevision.of(dir)
    assert_nil Rackbench::Labels::GitRevision.of(File.join(dir, "missing"))
  end

  describe ".capture" do
    let(:app) { Struct.new(:name, :path) }
    let(:source) { Struct.new(:apps) }
    let(:variant) { Struct.new(:install, :recipe) }
    let(:install) { Struct.new(:recipe) }

    let(:git_fake) do
      Object.new.tap do |fake|
        def fake.of(path) = path == "/src/own" ? { "commit" => "a" * 40, "subject" => "Own", "dirty" => false } : nil
        def fake.commit_info(_path, _commit) = {}
      end
    end

    it "takes the revisions of apps given by path and of rubies whose recipe names a commit" do
      apps = source.new([app.new("own", "/src/own"), app.new("rack-hello", nil), app.new("elsewhere", "/tmp/x")])
      variants = { "dev" => variant.new(install.new({ "source" => { "url" => "git", "commit" => "b" * 40 } }), nil),
                   "patched" => variant.new(install.new(nil), { commit: "c" * 40 }),
                   "stock" => variant.new(install.new(nil), nil) }
      labels = Rackbench::Labels.capture(given: { "branch" => "main" }, source: apps, variants: variants, git: git_fake)
      assert_equal [%w[app own], %w[ruby dev], %w[ruby patched]], labels.revisions.map { |r| r.values_at("of", "name") }
      assert_equal "c" * 40, labels.revision("ruby", "patched")["commit"]
      assert_equal "branch=main; app own aaaaaaaaaa, ruby dev bbbbbbbbbb, ruby patched cccccccccc", labels.text
    end

    it "has none for a source without apps (a micro-benchmark) and rubies not built from source" do
      labels = Rackbench::Labels.capture(given: {}, source: Object.new, variants: { "ruby" => variant.new(install.new(nil), nil) })
      assert labels.empty?
      assert_nil labels.to_h
      assert_equal "", labels.text
    end
  end

  it "takes the commit of a ruby built from a git repository from its build recipe, with the patches on top" do
    git("init", "-q")
    sha = commit("Speed up Hash#[]=", "hash.c" => "/* ... */\n")
    recipe = { "key" => "e11383d5631ff0a4", "name" => "dev",
               "source" => { "kind" => "git", "path" => dir, "ref" => "main", "commit" => sha },
               "patches" => [{ "name" => "trim.patch", "sha256" => "9c0e" }] }
    install = Rackbench::Rubies::Install.new(name: "dev", path: "/opt/dev/bin/ruby", source: :build, engine: "ruby",
                                             version: "3.5.0", recipe: recipe)
    variant = Rackbench::Rubies::Variant.new(install: install, name: "dev")
    revision = Rackbench::Labels.ruby_revision("dev", variant)
    assert_equal({ "of" => "ruby", "name" => "dev", "commit" => sha, "ref" => "main", "subject" => "Speed up Hash#[]=",
                   "patches" => ["trim.patch"] }, revision.except("committed_at"))
    assert_equal "ruby dev #{sha[0, 10]}+trim.patch", Rackbench::Labels.revision_text(revision)
    tarball = recipe.merge("source" => { "kind" => "tarball", "path" => "/src/ruby-3.4.5.tar.xz", "sha256" => "1" * 64 })
    assert_nil Rackbench::Labels.ruby_revision("stock", Rackbench::Rubies::Variant.new(install: install.with(recipe: tarball)))
  end

  describe "#fingerprint" do
    let(:revision) { { "of" => "app", "name" => "own", "commit" => "a" * 40, "subject" => "x", "dirty" => false } }

    it "leaves an experiment without labels as it was" do
      assert_equal "f" * 64, Rackbench::Labels.new(given: {}, revisions: []).fingerprint("f" * 64)
    end

    it "changes with the labels, the commit and uncommitted changes, not with what follows from the commit" do
      base = Rackbench::Labels.new(given: {}, revisions: [revision])
      prints = [base,
                Rackbench::Labels.new(given: { "run" => "2" }, revisions: [revision]),
                Rackbench::Labels.new(given: {}, revisions: [revision.merge("commit" => "b" * 40)]),
                Rackbench::Labels.new(given: {}, revisions: [revision.merge("dirty" => true, "diff_digest" => "123456789abc")])]
                .map { |labels| labels.fingerprint("f" * 64) }
      assert_equal 4, prints.uniq.size
      refute_includes prints, "f" * 64
      assert_equal prints.first, Rackbench::Labels.new(given: {}, revisions: [revision.merge("subject" => "reworded")])
                                       .fingerprint("f" * 64)
    end
  end

  it "says what changed between two runs: the revisions that moved and the labels" do
    earlier = Rackbench::Labels.new(given: { "branch" => "main", "run" => "1" },
                         revisions: [{ "of" => "app", "name" => "own", "commit" => "a" * 40 }])
    later = Rackbench::Labels.new(given: { "branch" => "main", "run" => "2" },
                       revisions: [{ "of" => "app", "name" => "own", "commit" => "b" * 40, "subject" => "Burn" },
                                   { "of" => "ruby", "name" => "dev", "commit" => "c" * 40 }])
    assert_equal ["app own aaaaaaaaaa → bbbbbbbbbb \"Burn\"", "ruby dev cccccccccc", "run=2"], later.changes_from(earlier)
    assert_equal [], later.changes_from(later)
    dirty = { "of" => "app", "name" => "own", "commit" => "b" * 40, "dirty" => true, "diff_digest" => "abcdef123456" }
    assert_equal "app own bbbbbbbbbb-dirty.abcdef", Rackbench::Labels.revision_text(dirty)
  end

  it "is stored with its experiment and read back equal" do
    labels = Rackbench::Labels.new(given: { "testbed" => "ci-1" }, revisions: [{ "of" => "app", "name" => "own", "commit" => "a" }])
    Rackbench::Store.open(dir) do |store|
      id = store.find_or_create_experiment(name: "e", fingerprint: labels.fingerprint("f"), seed: 1, batches: 1,
                                           source_text: "", environment: nil, labels: labels.to_h)
      plain = store.find_or_create_experiment(name: "e", fingerprint: "f", seed: 1, batches: 1, source_text: "",
                                              environment: nil)
      refute_equal id, plain
      assert_equal labels, Rackbench::Labels.from_h(store.experiment(id)[:labels])
      assert_equal "ci-1", Rackbench::Labels.from_h(store.experiment(id)[:labels]).testbed
      assert_nil store.experiment(plain)[:labels]
      assert Rackbench::Labels.from_h(nil).empty?
    end
  end
end
