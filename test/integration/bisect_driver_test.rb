# frozen_string_literal: true

require "test_helper"
require "json"
require "shellwords"
require "rackbench/cli/bisect_command"
require "support/bisect_fakes"

# `rackbench bisect` over real git repositories, worktrees, the real Runner
# and store, and the Runner's fakes for what runs a trial (no server, no
# load: the commit's own rps.txt is the figure; test/support/bisect_fakes.rb):
# every shape of the issue's proofs, in seconds. The real servers under
# valgrind are bisect_app_test.rb; the Ruby proof is doc/performance.md.
describe "rackbench bisect (fakes)" do

  let(:dir) { Dir.mktmpdir("rackbench-bisect") }
  let(:repo) { File.join(dir, "app") }
  let(:results) { File.join(dir, "results") }
  let(:file) do
    File.join(dir, "bisect.yml").tap do |path|
      File.write(path, <<~YAML)
        name: page
        servers: [puma]
        apps:
          - { name: app, path: app }
        load: { duration: 0.1s, warmup: 0s, connections: 2, timeout: 2s }
      YAML
    end
  end
  let(:out) { StringIO.new }
  let(:err) { StringIO.new }

  after { FileUtils.rm_rf(dir) }

  # Runs the command over the fakes; returns [exit code, engine].
  def bisect(*args, interrupt_at: nil)
    engine = nil
    steps = lambda do |d, o, e, _store|
      built, engine, = Rackbench::Test::BisectFakes.steps(d, interrupt_at: interrupt_at, out: o, err: e)
      built
    end
    code = Rackbench::CLI::BisectCommand.new(out: out, err: err, steps: steps)
                                        .run([file, "--results", results, "--measure", "rps", "--min-batches", "3",
                                              "--max-batches", "4", *args])
    [code, engine]
  end

  def doc
    JSON.parse(File.read(File.join(results, "bisect.json")))
  end

  # The app's commits the engine measured, by their worktree (one per
  # commit: bisect-worktrees/page/<12 digits>), and how many trials each.
  def measured_trees(engine)
    engine.apps.map { |app| File.basename(app) }.tally
  end

  it "names the first bad commit of 64, confirms it, and leaves the user's working copy alone" do
    commits = Rackbench::Test::BisectFakes.history(repo, commits: 64, steps: { 40 => 0.2 })
    code, engine = bisect("--good", commits.first, "--bad", "main", "--threshold", "10%")
    assert_equal Rackbench::CLI::EXIT_OK, code, err.string
    assert_equal "found", doc["status"]
    step = doc["steps"].first
    assert_equal [commits[40], commits[39], true], [step["first_bad"]["commit"], step["last_good"]["commit"], step["exact"]]
    assert_equal "confirmed", step["confirmation"]["status"]
    assert_in_delta 0.2, step["effect"]["worsening"], 0.01
    assert_equal "2 files changed, 2 insertions(+), 2 deletions(-)", step["first_bad"]["diff_stat"]["summary"]
    assert_equal ["config.ru | 2 +-", "rps.txt   | 2 +-"], step["first_bad"]["diff_stat"]["files"]
    assert_match(/First bad commit: #{commits[40]}\n  Commit 40: slower/, out.string)
    assert_match(/confirmed in an interleaved run of both commits: 20\.\d\d% worse/, out.string)

    # The two ends, log2(64) = 6 splits, 3 batches each; the confirmation: 2 commits x 3 batches.
    measured = doc["measured"].map { |row| row["index"] }
    assert_equal 8, measured.size
    assert_equal (8 * 3) + 6, engine.calls
    assert_equal({ 3 => 6, 6 => 2 }, measured_trees(engine).values.tally, "each commit's 3 batches, the confirmed two's 6")
    assert_equal({ "good" => 5, "bad" => 3 }, doc["measured"].map { |row| row["side"] }.tally.slice("good", "bad"))

    assert_equal ["bisect.html", "bisect.json", "bisect.log", "bisect.md", "results.db"],
                 Dir.children(results).grep(/\Abisect\.|results/).sort
    assert_empty Dir.glob(File.join(results, "bisect-worktrees", "page", "*")), "worktrees removed at the end"
    assert_equal [repo], Rackbench::Test::BisectRepos.git(repo, "worktree", "list", "--porcelain").scan(/^worktree (.+)$/).flatten
    assert_equal commits.last, Rackbench::Test::BisectRepos.git(repo, "rev-parse", "HEAD").strip
    assert_empty Rackbench::Test::BisectRepos.git(repo, "status", "--porcelain")
    stored = Rackbench::Store.open(results, &:experiments).map { |e| e[:name] }
    assert_includes stored, "page.bisect.#{commits[40][0, 12]}"
    assert_includes stored, "page.bisect.confirm.#{commits[39][0, 8]}-#{commits[40][0, 8]}"
  end

  it "resumes after an interruption with the command it printed, and measures no batch of any commit twice" do
    commits = Rackbench::Test::BisectFakes.history(repo, commits: 64, steps: { 40 => 0.2 })
    options = ["--good", commits.first, "--bad", "main", "--threshold", "10%", "--min-step", "7.5%", "--confidence", "90%"]
    code, first = bisect(*options, interrupt_at: 14)
    assert_equal Rackbench::CLI::EXIT_INTERRUPTED, code
    assert_match(/resume with rackbench bisect #{Regexp.escape(file)} --good #{commits.first} --bad main --resume/, err.string)
    refute_empty Dir.glob(File.join(results, "bisect-worktrees", "page", "*")), "the worktrees stay for the resume"

    refused = assert_raises(Rackbench::UsageError) { bisect(*options) }
    assert_match(/already holds commits of bisect page: add --resume/, refused.message)

    # The line it printed, as given: every setting of the first run.
    printed = Shellwords.split(err.string[/resume with (.*)$/, 1])
    assert_equal %w[rackbench bisect], printed.shift(2)
    given = ->(argv) { Hash[*argv.reject { |word| word == "--resume" }].slice(*options.each_slice(2).map(&:first)) }
    assert_equal given.call(options), given.call(printed.drop(1))
    code, resumed = bisect(*printed.drop(1))
    assert_equal Rackbench::CLI::EXIT_OK, code, err.string
    assert_equal commits[40], doc["steps"].first["first_bad"]["commit"]
    # The 14th call was interrupted before its result: the 13 before it
    # are stored, and the resumed run makes the rest of a straight run's 30.
    assert_equal 14, first.calls
    assert_equal (8 * 3) + 6, 13 + resumed.calls
    interrupted = File.basename(first.apps.last)
    seen = measured_trees(first).merge(measured_trees(resumed)) { |_, a, b| a + b }
    seen[interrupted] -= 1
    assert_equal({ 3 => 6, 6 => 2 }, seen.values.tally, "each commit's 3 batches once, the confirmed two's 6")

    again = bisect("--good", commits.first, "--bad", "main", "--threshold", "10%", "--resume").last
    assert_equal 0, again.calls, "a finished bisection replays from the store"
  end

  it "exits 4 when good and bad cannot be told apart from the threshold, and 1 when good cannot be measured" do
    # A step of 2% in a figure that varies by 5% from batch to batch: at
    # the most batches its interval still reaches either side of 1%.
    commits = Rackbench::Test::BisectFakes.history(repo, commits: 8, steps: { 5 => 0.02 }, jitter: 0.05)
    code, engine = bisect("--good", commits.first, "--bad", "main")
    assert_equal Rackbench::CLI::EXIT_CANNOT_SAY, code, out.string
    assert_equal ["cannot say", 8], [doc["status"], engine.calls], "the two ends, 3 batches each, then one more each"
    assert_match(/^rackbench bisect: cannot say: /, out.string)

    FileUtils.rm_rf([repo, results])
    commits = Rackbench::Test::BisectFakes.history(repo, commits: 8, steps: { 5 => 0.2 }, broken: [0])
    code, = bisect("--good", commits.first, "--bad", "main", "--threshold", "10%")
    assert_equal Rackbench::CLI::EXIT_FAILURE, code, out.string
    assert_equal "unmeasurable", doc["status"]
    assert_match(/^rackbench bisect: unmeasurable: .*#{Rackbench::Test::BisectFakes::BOOT_FAILURE}/, out.string.gsub(/\n {2,}/, " "))
  end

  it "reports both steps of a change made of two" do
    commits = Rackbench::Test::BisectFakes.history(repo, commits: 32, steps: { 10 => 0.12, 20 => 0.12 })
    code, = bisect("--good", commits.first, "--bad", "main", "--threshold", "20%", "--min-step", "8%")
    assert_equal Rackbench::CLI::EXIT_OK, code, err.string
    assert_equal [commits[10], commits[20]], doc["steps"].map { |s| s["first_bad"]["commit"] }
    assert_equal %w[confirmed confirmed], doc["steps"].map { |s| s.dig("confirmation", "status") }
    doc["steps"].each { |s| assert_in_delta 0.5, s["share"], 0.05 }
    assert_match(/Step 1: first bad commit: #{commits[10]}/, out.string)
    assert_match(/Step 2: first bad commit: #{commits[20]}/, out.string)
    assert_equal 3, doc["measured"].map { |r| r["side"] }.uniq.size, "good, between the steps, bad"
  end

  it "stops in one line after the ends when good and bad do not differ" do
    commits = Rackbench::Test::BisectFakes.history(repo, commits: 64, steps: { 30 => 0.002 })
    code, engine = bisect("--good", commits.first, "--bad", "main", "--json")
    assert_equal Rackbench::CLI::EXIT_OK, code, err.string
    assert_equal "no step", JSON.parse(out.string)["status"]
    assert_equal 6, engine.calls, "the two ends, 3 batches each"
    out.truncate(0)
    out.rewind
    bisect("--good", commits.first, "--bad", "main", "--resume")
    refute_match(/against #64:|against #0: .*\(a step\)/, out.string, "no commit between the ends judged")
    assert_match(/\n#64 against #0: 0\.40% worse \(no change to 0\.40% worse\): no step of the threshold to bisect\n/,
                 "\n#{out.string.lines.map(&:strip).join("\n")}\n")
    assert_equal "rackbench bisect: nothing to bisect: bad 997 requests/s against good 1001 requests/s: 0.40% worse " \
                 "(no change to 0.40% worse), not beyond the 1% threshold\n", out.string.lines.last
  end

  it "skips commits that do not boot or whose file does not hold, naming them and why" do
    # The middle commit (16 of 32) does not boot, its neighbour has no config.ru.
    commits = Rackbench::Test::BisectFakes.history(repo, commits: 32, steps: { 25 => 0.2 }, broken: [16], no_app: [15])
    code, = bisect("--good", commits.first, "--bad", "main", "--threshold", "10%")
    assert_equal Rackbench::CLI::EXIT_OK, code, err.string
    assert_equal commits[25], doc["steps"].first["first_bad"]["commit"]
    skipped = doc["measured"].select { |r| r["status"] == "skipped" }.to_h { |r| [r["index"], r["reason"]] }
    assert_equal [15, 16], skipped.keys.sort
    assert_equal "batch 1 failed: #{Rackbench::Test::BisectFakes::BOOT_FAILURE}", skipped[16]
    assert_match(/\Aat #{commits[15][0, 10]}: .*apps\[0\]\.path: .* has no config\.ru/, skipped[15])
    # Lines are wrapped at 100 columns (not a terminal), their continuations indented.
    assert_empty out.string.lines.reject { |line| Rackbench::Text::Wrap.width(line.chomp) <= 100 }
    unwrapped = out.string.gsub(/\n {2,}/, " ")
    assert_match(/Skipped: #{commits[16][0, 10]} Commit 16: batch 1 failed: #{Rackbench::Test::BisectFakes::BOOT_FAILURE}/, unwrapped)
    assert_match(/##{16} #{commits[16][0, 10]} Commit 16: skipped, it cannot be measured/, unwrapped)
    trials = Rackbench::Store.open(results) { |s| s.trials(result: false) }
    assert_equal 1, trials.count { |t| !t.ok? }, "a commit that does not boot stops at its first failed trial"
  end

  it "flags a commit whose servers loaded other gems than the good commit's" do
    commits = Rackbench::Test::BisectFakes.history(repo, commits: 8, steps: { 6 => 0.2 }, gems: { 5 => { "rack" => "3.2.0" } })
    code, = bisect("--good", commits.first, "--bad", "main", "--threshold", "10%")
    assert_equal Rackbench::CLI::EXIT_OK, code, err.string
    rows = doc["measured"].to_h { |r| [r["index"], r["gems_differ"]] }
    assert_equal [["rack", "3.1.0", "3.2.0"]], rows.fetch(8)
    assert_empty rows.fetch(4)
    assert_match(/gems differ: rack 3\.1\.0 vs 3\.2\.0/, File.read(File.join(results, "bisect.md")))

    # --markdown -: stdout holds the Markdown alone, the progress goes to stderr.
    out.truncate(0)
    out.rewind
    bisect("--good", commits.first, "--bad", "main", "--threshold", "10%", "--resume", "--markdown", "-")
    assert_equal File.read(File.join(results, "bisect.md")), out.string
    assert_match(/^  #8 against #0: 20\.\d\d% worse/, err.string)
  end

  it "says what it will take with --dry-run, and runs and writes nothing" do
    commits = Rackbench::Test::BisectFakes.history(repo, commits: 24, steps: { 17 => 0.2 })
    code, engine = bisect("--good", commits.first, "--bad", "main", "--dry-run")
    assert_equal Rackbench::CLI::EXIT_OK, code
    assert_match(/\ABisect page: app 'app' \(#{Regexp.escape(File.realpath(repo))}\), 24 commits from #{commits.first[0, 10]}/, out.string)
    assert_match(/about 7 commits measured \(the 2 ends and about log2 24 = 5 between\) and a confirmation run/, out.string)
    assert_match(/3 batches of 1 trial per commit, about \d+s a trial \(guessed/, out.string)
    assert_equal 0, engine.calls
    refute File.exist?(results)
  end

  it "refuses, in one line each, refs it cannot bisect" do
    commits = Rackbench::Test::BisectFakes.history(repo, commits: 4)
    [[%w[--good main --bad main], /--good main and --bad main name the same commit/],
     [["--good", "main", "--bad", commits.first], /is not an ancestor of --bad/],
     [%w[--good v9 --bad main], /--good v9: v9 names no commit of the repository/],
     [%w[--bad main], /bisect needs --good REF and --bad REF/],
     [["--good", commits.first, "--bad", "main", "--over", "ruby"], /--over ruby: .* has no such history \(histories: app 'app'/]]
      .each do |args, message|
        err.truncate(0)
        err.rewind
        code = Rackbench::CLI.run(["bisect", file, *args], out: out, err: err)
        assert_equal Rackbench::CLI::EXIT_USAGE, code, args.inspect
        assert_match(message, err.string)
        assert_equal 1, err.string.lines.size
      end
  end
end
