# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"
require "rackbench/cli"
require_relative "../support/report_store"
require_relative "../support/inside_document"
require_relative "../support/entry_results"

# `rackbench cache`, `report`, `compare` and `gate` as a pipe captures them
# (not a terminal: 100 columns), over results and a cache with what makes
# lines long: rubies with long names, four varying dimensions, the inside
# figures, a request list with long page names, flags, paths deep in the
# cache. No line is over 100 columns; with --wide the long cells are whole
# (some line is longer), and --json has them whole too.
describe "output within 100 columns" do
  LIMIT = 100
  RUBY = "ruby-3.4.5-slow-hash-aset+yjit"
  PAGE = "GET /accounts/:account_id/projects/:project_id/issues?sort=updated_at"
  APP_DIR = "/home/someone/src/github.com/acme/storefront-with-a-long-name/apps/storefront"

  before { @dir = Dir.mktmpdir("rackbench-output-width") }
  after { FileUtils.rm_rf(@dir) }

  def cli(*argv, env: {})
    out = StringIO.new
    err = StringIO.new
    saved = env.to_h { |name, _| [name, ENV.fetch(name, nil)] }
    # Only the cache's location: the width comes from the output, a StringIO (not a terminal).
    env.each { |name, value| ENV[name] = value }
    code = Rackbench::CLI.run(argv, out: out, err: err)
    assert_equal 0, code, "rackbench #{argv.join(" ")}: #{err.string}"
    out.string
  ensure
    saved&.each { |name, value| value.nil? ? ENV.delete(name) : ENV[name] = value }
  end

  def widest(text) = text.lines.map { |line| Rackbench::Text::Wrap.width(line.chomp) }.max

  def assert_fits(text, what)
    over = text.lines.reject { |line| Rackbench::Text::Wrap.width(line.chomp) <= LIMIT }
    assert_empty over, "#{what}: lines over #{LIMIT} columns:\n#{over.join}"
  end

  # Four dimensions vary, the rubies have long names, and every trial
  # carries the counting agent's document (the inside tables) and its CPU;
  # a noisy configuration gets flags.
  def results
    dir = File.join(@dir, "results")
    configs = {}
    [RUBY, "ruby-3.3.8"].each do |ruby|
      { "puma" => [2, 1], "falcon" => [4, 16] }.each do |server, (processes, threads)|
        dims = { "ruby" => ruby, "server" => server, "app" => "rack-hello", "processes" => processes,
                 "threads" => threads }
        configs[dims] = ReportStore.noisy(ruby == RUBY ? 1200 : 1000, server == "falcon" ? 0.2 : 0.01, 5,
                                          configs.size + 1)
      end
    end
    fields = lambda do |_dims, _batch, engine|
      inside = InsideDocument.forked.merge("window" => { "requests" => engine["requests"], "duration_s" => 2.0 })
      { inside: inside, sample: { "rss_peak_bytes" => 40_000_000, "pss_peak_bytes" => 30_000_000,
                                  "cpu_user_s" => 0.3, "cpu_system_s" => 0.1 } }
    end
    Rackbench::Store.open(dir) { |store| ReportStore.fill(store, configs, name: "wide-matrix", fields: fields) }
    dir
  end

  # Two servers over a request list whose first page has a long name.
  def pages
    dir = File.join(@dir, "pages")
    documents = lambda do |slow_ms|
      Array.new(5) do |batch|
        EntryResults.result([EntryResults.entry(0, PAGE, Array.new(40) { (slow_ms + batch) * 1_000_000 },
                                                status: { "200" => 38, "422" => 2 }),
                             EntryResults.entry(1, "GET /", Array.new(60) { 2_000_000 + batch })])
      end
    end
    Rackbench::Store.open(dir) do |store|
      EntryResults.fill(store, { ReportStore.dims(ruby: RUBY, server: "puma") => documents.call(20),
                                 ReportStore.dims(ruby: RUBY, server: "falcon") => documents.call(25) })
    end
    dir
  end

  # A cache laid out as runs leave it: an environment of an app deep in a
  # home directory, used by a results directory with a long path.
  def cache
    root = File.join(@dir, "cache")
    env = File.join(root, "bundles", "storefront-0123456789abcdef")
    gems = File.join(root, "bundles", "gems", "ruby-3.4.0")
    FileUtils.mkdir_p([env, gems])
    File.write(File.join(env, "rackbench-env.json"),
               JSON.generate("app_dir" => APP_DIR, "install_path" => gems,
                             "gemfile_extra" => ['gem "passenger"', 'gem "base64"', 'gem "stackprof"'],
                             "ruby" => File.join(root, "rubies", "e11383d5631ff0a4", "prefix", "bin", "ruby")))
    users = File.join(@dir, "benchmarks", "storefront", "2026-12-03-nightly-with-yjit-and-jemalloc")
    FileUtils.mkdir_p(users)
    File.write(File.join(users, "results.db"), "")
    File.write(File.join(env, "users"), "#{users}\n")
    File.write(File.join(env, "in-use.lock"), "")
    root
  end

  it "fits `rackbench cache` within 100 columns, the paths whole with --wide" do
    root = cache
    text = cli("cache", env: { "RACKBENCH_CACHE" => root })
    assert_fits text, "cache"
    assert_match(/\| storefront \+ passenger, +\|.*\n.*\| base64, stackprof/, text, "the environment's name wraps")
    wide = cli("cache", "--wide", env: { "RACKBENCH_CACHE" => root })
    assert_operator widest(wide), :>, LIMIT
    assert_includes wide, APP_DIR
    assert_includes JSON.generate(JSON.parse(cli("cache", "--json", env: { "RACKBENCH_CACHE" => root }))), APP_DIR
  end

  # The matrix's report, made once per test with fewer bootstrap
  # resamples than the command's (what is measured here is the layout).
  def matrix_report
    Rackbench::Store.open(results) { |store| Rackbench::Report.new(store, baseline: "ruby=ruby-3.3.8", resamples: 200) }
  end

  # What a view prints into a pipe: Text::Width's width of a StringIO.
  def pipe_width = Rackbench::Text::Width.for(StringIO.new, env: {})

  it "fits the report within 100 columns, every cell whole with --wide" do
    report = matrix_report
    text = Rackbench::Report::Terminal.new(report, width: pipe_width).render
    assert_fits text, "report"
    assert_includes text, "Inside the server"
    assert_includes text, "(continued)", "the fifteen figures continue below their configurations"
    wide = Rackbench::Report::Terminal.new(report, width: nil).render
    assert_operator widest(wide), :>, LIMIT
    assert_includes wide, "| #{RUBY} |"
    refute_includes wide, "(continued)"
  end

  it "fits `rackbench report --trials` within 100 columns, whole with --wide" do
    dir = results
    assert_fits cli("report", "--results", dir, "--trials"), "report --trials"
    assert_operator widest(cli("report", "--results", dir, "--trials", "--wide")), :>, LIMIT
  end

  it "fits a report's and a comparison's pages within 100 columns, the page whole with --wide" do
    dir = pages
    text = cli("report", "--results", dir)
    assert_fits text, "report with pages"
    assert_includes text, "…", "the long page name shortened in the middle"
    assert_includes cli("report", "--results", dir, "--wide"), PAGE

    compare = cli("compare", "--results", dir, "server=puma", "server=falcon")
    assert_fits compare, "compare"
    assert_includes cli("compare", "--results", dir, "server=puma", "server=falcon", "--wide"), PAGE
  end

  it "fits the comparison and the gate within 100 columns" do
    report = matrix_report
    compare = Rackbench::Report::Compare.configurations(report, "ruby=ruby-3.3.8", "ruby=#{RUBY}")
    text = compare.terminal_table(width: pipe_width)
    assert_fits text, "compare"
    assert_includes text, "Inside the server"
    assert_operator widest(compare.terminal_table(width: nil)), :>, LIMIT

    gate = Rackbench::Gate.within(report, rules: Rackbench::Gate::Rule.parse_all(["rps>50%", "p99>50%"])).to_h
    text = Rackbench::Gate::Terminal.new(gate, width: pipe_width).render
    assert_fits text, "gate"
    assert_match(/^rackbench gate: /, text)
    assert_operator widest(Rackbench::Gate::Terminal.new(gate, width: nil).render), :>, LIMIT
  end
end
