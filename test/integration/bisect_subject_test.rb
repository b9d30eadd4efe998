# frozen_string_literal: true

require "test_helper"
require "rackbench/bisect"
require "support/bisect_repos"

# What a bisection finds in git, with git itself (no server): whose
# history it walks (Subject), the commits from good to bad (History), a
# ruby's step file at a commit (Derivation: git resolves build.ref when the
# file is read), and an app's worktrees (Worktrees).
describe "Rackbench::Bisect and git" do

  let(:dir) { File.realpath(Dir.mktmpdir("rackbench-bisect-git")) }

  after { FileUtils.rm_rf(dir) }

  def settings(**options)
    Rackbench::Bisect::Settings.build(good: "v1", bad: "main", default_measure: "instructions", **options)
  end

  # A repository of +count+ commits, each changing +file+.
  def repo(name, count, file: "notes.txt", extra: {})
    Rackbench::Test::BisectRepos.import(File.join(dir, name), (0...count).map { |i| ["Commit #{i}", { file => "#{i}\n" }.merge(extra)] })
  end

  def parse(text)
    Rackbench::Experiment.parse(text, source: "bisect.yml", base_dir: dir)
  end

  describe "Subject" do
    let(:experiment) do
      repo("ruby", 2)
      repo("apps", 2, file: "shop/config.ru", extra: { "blog/config.ru" => "run nil\n" })
      parse(<<~YAML)
        name: both
        rubies: [ruby, { name: dev, build: { source: ruby } }]
        servers: [puma]
        apps:
          - { name: shop, path: apps/shop }
          - { name: blog, path: apps/blog }
          - rack-hello
      YAML
    end

    it "finds every history the file holds, and asks which one when there are several" do
      found = Rackbench::Bisect::Subject.candidates(experiment).map { |s| [s.kind, s.name, s.repository, s.subdir] }
      assert_equal [["ruby", "dev", File.join(dir, "ruby"), ""], ["app", "shop", File.join(dir, "apps"), "shop"],
                    ["app", "blog", File.join(dir, "apps"), "blog"]], found
      error = assert_raises(Rackbench::UsageError) { Rackbench::Bisect::Subject.find(experiment) }
      assert_equal "bisect.yml has several histories to bisect (ruby 'dev' (#{dir}/ruby), app 'shop' (#{dir}/apps/shop), " \
                   "app 'blog' (#{dir}/apps/blog)): choose one with --over ruby=dev or --over app=shop or --over app=blog",
                   error.message
      assert_equal "dev", Rackbench::Bisect::Subject.find(experiment, over: ["ruby", nil]).name
      assert_equal "blog", Rackbench::Bisect::Subject.find(experiment, over: %w[app blog]).name
      assert_raises(Rackbench::UsageError) { Rackbench::Bisect::Subject.find(experiment, over: ["app", nil]) }
    end

    it "walks a ruby built from a bare repository (a mirror, as the nightly example keeps)" do
      commits = repo("upstream", 3, file: "hash.c")
      mirror = File.join(dir, "ruby.git")
      Rackbench::Test::BisectRepos.git(dir, "clone", "--quiet", "--mirror", File.join(dir, "upstream"), mirror)
      mirrored = parse("name: nightly\nrubies: [{ name: master, build: { source: ruby.git, ref: main } }]\n" \
                       "servers: [puma]\napps: [rack-hello]\n")
      found = Rackbench::Bisect::Subject.find(mirrored)
      assert_equal ["ruby", "master", mirror], [found.kind, found.name, found.repository]
      history = Rackbench::Bisect::History.between(Rackbench::Bisect::Git.new(mirror), good: commits[0], bad: "main")
      assert_equal commits, history.commits.map(&:sha)
      assert_equal "1 file changed, 1 insertion(+), 1 deletion(-)", history.diff_stat(history.bad)["summary"]
      # Inside a repository but not at its top: no history of its own.
      FileUtils.mkdir_p(File.join(dir, "upstream", "src"))
      inside = parse("name: x\nrubies: [{ name: dev, build: { source: upstream/src } }]\nservers: [puma]\napps: [rack-hello]\n")
      assert_empty Rackbench::Bisect::Subject.candidates(inside)
    end

    it "says there is nothing to bisect when no entry lives in git" do
      plain = parse("name: plain\nservers: [puma]\napps: [rack-hello]\n")
      error = assert_raises(Rackbench::UsageError) { Rackbench::Bisect::Subject.find(plain) }
      assert_match(/\Abisect\.yml has no history to bisect: bisect walks the commits of one ruby built from a git repository/,
                   error.message)
    end
  end

  describe "History" do
    it "walks the first-parent line from good to bad, and refuses a good commit off it" do
      commits = repo("app", 4)
      app = File.join(dir, "app")
      history = Rackbench::Bisect::History.between(Rackbench::Bisect::Git.new(app), good: commits[1], bad: "main")
      assert_equal commits[1..], history.commits.map(&:sha)
      assert_equal ["Commit 1", commits[0]], [history.good.subject, history.good.parent]
      assert_equal({ "summary" => "1 file changed, 1 insertion(+), 1 deletion(-)", "files" => ["notes.txt | 2 +-"] },
                   history.diff_stat(history.bad))

      # A side branch merged into main: its commit is an ancestor of main, off its first-parent line.
      Rackbench::Test::BisectRepos.git(app, "checkout", "--quiet", "-b", "side", commits[1])
      File.write(File.join(app, "side.txt"), "side\n")
      side = Rackbench::Test::BisectRepos.commit(app, "On the side", 10)
      Rackbench::Test::BisectRepos.git(app, "checkout", "--quiet", "main")
      Rackbench::Test::BisectRepos.git(app, "merge", "--quiet", "--no-ff", "-m", "Merge side", "side",
                env: Rackbench::Test::BisectRepos::AUTHOR.merge("GIT_AUTHOR_DATE" => "@1780009999 +0000", "GIT_COMMITTER_DATE" => "@1780009999 +0000"))
      error = assert_raises(Rackbench::UsageError) do
        Rackbench::Bisect::History.between(Rackbench::Bisect::Git.new(app), good: side, bad: "main")
      end
      assert_match(/is not on the first-parent line of --bad main \(git log --first-parent main\)/, error.message)
      merged = Rackbench::Bisect::History.between(Rackbench::Bisect::Git.new(app), good: commits[3], bad: "main")
      assert_equal ["Merge side"], merged.commits.drop(1).map(&:subject), "the merge is one commit of the line"
    end
  end

  describe "Derivation of a ruby" do
    let(:commits) { repo("ruby", 3, file: "hash.c") }
    let(:experiment) do
      commits
      parse(<<~YAML)
        name: hash-aset
        rubies:
          - ruby
          - { name: dev, build: { source: ruby, configure: ["--disable-jit-support"] }, options: ["--yjit"] }
          - { name: dev-arenas, ruby: dev, env: { MALLOC_ARENA_MAX: 2 } }
        servers: [puma, webrick]
        apps: [rack-hello]
        load: { duration: 2s, warmup: 1s }
        exclude:
          - { ruby: ruby, server: webrick }
          - { ruby: [ruby, dev], server: puma, app: rack-hello }
          - { ruby: dev-arenas, server: webrick }
        capacity: { p99: 50ms }
      YAML
    end
    let(:subject_) { Rackbench::Bisect::Subject.find(experiment) }

    it "builds the ruby at the commit under its own name, its variant beside it, the other rubies left out, as a plain instructions run" do
      derivation = Rackbench::Bisect::Derivation.new(experiment: experiment, subject: subject_, settings: settings)
      step = derivation.commit_experiment(commits[1])
      assert_equal "hash-aset.bisect.#{commits[1][0, 12]}", step.name
      assert_equal %w[dev dev-arenas], step.rubies.map(&:label)
      assert_equal [nil, "dev", { "MALLOC_ARENA_MAX" => "2" }],
                   [step.rubies.last.build, step.rubies.last.ruby, step.rubies.last.env]
      build = step.rubies.first.build
      assert_equal [commits[1], commits[1], ["--yjit"]], [build.source.ref, build.source.identity["commit"], step.rubies.first.options]
      assert_equal ["--disable-jit-support"], build.configure
      assert_equal [10, ["instructions"]], [step.batches, step.measure]
      assert_nil step.capacity
      config = step.configurations.first
      assert_equal Rackbench::Bisect::Derivation::DEFAULT_COUNT, config.load[:count], "a window of a count, not 2s"
      # The exclude naming only the other ruby went; the other names dev alone now.
      assert_equal [{ "ruby" => ["dev"], "server" => ["puma"], "app" => ["rack-hello"] },
                    { "ruby" => ["dev-arenas"], "server" => ["webrick"] }], step.exclude
      assert_equal [%w[dev webrick], %w[dev-arenas puma]], step.configurations.map { |c| c.dims.values_at("ruby", "server") }.sort
      refute_equal step.fingerprint, derivation.commit_experiment(commits[2]).fingerprint, "the commit keys the build"
    end

    it "runs the parent and the commit side by side to confirm a step, each under the name of its commit" do
      derivation = Rackbench::Bisect::Derivation.new(experiment: experiment, subject: subject_, settings: settings(measure: "rps"))
      step = derivation.confirm_experiment(commits[0], commits[1])
      assert_equal "hash-aset.bisect.confirm.#{commits[0][0, 8]}-#{commits[1][0, 8]}", step.name
      labels = ["dev-#{commits[0][0, 10]}", "dev-#{commits[1][0, 10]}"]
      variants = ["dev-arenas-#{commits[0][0, 10]}", "dev-arenas-#{commits[1][0, 10]}"]
      assert_equal [labels[0], variants[0], labels[1], variants[1]], step.rubies.map(&:label)
      assert_equal [commits[0], nil, commits[1], nil], step.rubies.map { |r| r.build&.source&.ref }
      assert_equal labels, step.rubies.map(&:ruby).values_at(1, 3), "each variant follows its commit's build"
      assert_equal ["time"], step.measure
      assert_in_delta 2.0, step.configurations.first.load[:duration_s]
      assert_equal ["ruby", { labels[1] => labels[0], variants[1] => variants[0] }], derivation.confirm_pairs(commits[0], commits[1])
      assert_equal [{ "ruby" => labels, "server" => ["puma"], "app" => ["rack-hello"] },
                    { "ruby" => variants, "server" => ["webrick"] }], step.exclude
    end
  end

  describe "Worktrees" do
    it "checks out each commit in a worktree of its own, its tracked files reset when found again, and removes them all" do
      commits = repo("app", 3)
      app = File.join(dir, "app")
      trees = Rackbench::Bisect::Worktrees.new(git: Rackbench::Bisect::Git.new(app), root: File.join(dir, "results", "trees"))
      first = trees.checkout(commits[0])
      assert_equal "0\n", File.read(File.join(first, "notes.txt"))
      assert_equal "2\n", File.read(File.join(app, "notes.txt")), "the working copy stays at main"

      # A setup that rewrote a tracked file, and wrote an untracked one.
      File.write(File.join(first, "notes.txt"), "rewritten\n")
      File.write(File.join(first, "db.sqlite3"), "data\n")
      assert_equal first, trees.checkout(commits[0])
      assert_equal ["0\n", "data\n"], [File.read(File.join(first, "notes.txt")), File.read(File.join(first, "db.sqlite3"))]
      assert_equal({ "commit" => commits[0], "dirty" => false },
                   Rackbench::Labels::GitRevision.of(first).slice("commit", "dirty"))

      # A directory left at another commit (or by hand) is made again.
      FileUtils.rm_rf(File.join(first, ".git"))
      assert_equal commits[0], Rackbench::Labels::GitRevision.of(trees.checkout(commits[0]))["commit"]
      trees.checkout(commits[1])
      assert_equal 3, Rackbench::Test::BisectRepos.git(app, "worktree", "list").lines.size
      assert_equal 2, trees.remove_all
      assert_equal 1, Rackbench::Test::BisectRepos.git(app, "worktree", "list").lines.size
      refute File.exist?(File.join(dir, "results", "trees"))
      assert_empty Rackbench::Test::BisectRepos.git(app, "status", "--porcelain")
    end
  end
end
