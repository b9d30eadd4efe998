# frozen_string_literal: true

require "test_helper"
require "csv"
require "json"
require "open3"
require "sqlite3"
require "stringio"
require_relative "../../apps/rails-posts/posts_db"

# rails-posts on SQLite and on PostgreSQL in one experiment, as a user
# writes it (`apps: [rails-posts, rails-posts-pg]`): both measured, each
# trial's server proved to run on its own database (DATABASE_URL set or
# unset inside it), PostgreSQL's cost reported, and the data the two
# served identical, row for row, table by table.
describe "rails-posts on SQLite and PostgreSQL (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-rails-databases") }
  let(:results) { File.join(dir, "results") }
  let(:root) { File.expand_path("../..", __dir__) }

  after { FileUtils.rm_rf(dir) }

  # Every row of rails-posts' tables as text, "id|...|updated_at", in id order.
  def sqlite_rows(path)
    db = SQLite3::Database.new(path)
    PostsDb::COLUMNS.keys.to_h { |table| [table, db.execute("SELECT * FROM #{table} ORDER BY id").map { |row| row.join("|") }] }
  ensure
    db&.close
  end

  def postgresql_rows(url)
    PostsDb::COLUMNS.keys.to_h do |table|
      out, err, status = Open3.capture3("psql", "-X", "-A", "-t", "-F", "|", url, "-c", "SELECT * FROM #{table} ORDER BY id")
      assert status.success?, err
      [table, out.lines.map(&:chomp)]
    end
  end

  # rails-posts' setup.rb, with the app's bundle, into the PostgreSQL a
  # Services::Started runs: what the trial's own setup wrote (the service
  # is stopped at the end of the run).
  def seeded_postgresql
    app = Rackbench::Apps.builtin("rails-posts-pg")
    context = Rackbench::Trial::Context.new(source: nil, variants: {}, layout: Rackbench::Runner::CpuLayout.detect,
                                            results_dir: dir, out: StringIO.new, ready_timeout_s: 60, stop_grace_s: 10,
                                            parent_env: ENV)
    started = Rackbench::Services::Started.start([app], context: context)
    url = started.for(app.name).env.fetch("DATABASE_URL")
    variant = Rackbench::Rubies.resolve({ ruby: RbConfig.ruby }, installs: [])
    bundle = Rackbench::BundleEnv.new(app_dir: app.dir, install: variant.install,
                                      gemfile_extra: Rackbench::Servers.fetch("puma").gem_lines("ruby"))
    bundle.ensure_installed!
    result = Rackbench::Rubies::Child.run(bundle.exec_prefix + [app.setup],
                                          env: ENV.to_h.merge(bundle.env, "DATABASE_URL" => url).compact,
                                          timeout_s: 120, chdir: app.dir)
    assert result.success?, result.output
    yield url
  ensure
    started&.stop
  end

  it "measures both in one experiment, each on its own database, with the same rows" do
    file = File.join(dir, "databases.yml")
    File.write(file, <<~YAML)
      name: rails-posts-databases
      batches: 1
      servers: [puma]
      apps: [rails-posts, rails-posts-pg]
      threads: 2
      load: { connections: 4, duration: 2s, warmup: 1s, timeout: 10s }
    YAML
    out, err, status = rackbench("run", file, "--results", results)
    assert status.success?, "#{out}\n#{err}"
    assert_match(/service postgresql of rails-posts-pg: PostgreSQL \d+\.\d+ on unix socket/, out)

    trials = Rackbench::Store.open(results, &:trials).to_h { |t| [t.app, t] }
    sqlite, pg = trials.values_at("rails-posts", "rails-posts-pg")
    assert sqlite.ok? && pg.ok?, [sqlite.reason, pg.reason].compact.join("\n")
    # What the servers ran on, as their processes reported it.
    assert_nil sqlite.identity["env"].fetch("DATABASE_URL")
    assert_match(%r{\Apostgresql:///rackbench\?host=/}, pg.identity["env"].fetch("DATABASE_URL"))
    assert_nil sqlite.services
    service = pg.services.first
    assert_equal "postgresql", service["name"]
    assert_equal({ "tables" => 3, "rows" => PostsDb::AUTHORS + PostsDb::POSTS + PostsDb::REPLIES }, service["state"],
                 "the template's rows, restored before the trial")
    assert_operator service["sample"]["cpu_user_s"] + service["sample"]["cpu_system_s"], :>, 0,
                    "PostgreSQL worked in the window"

    # PostgreSQL's cost in every view.
    report, = rackbench("report", "--results", results)
    assert_match(/^Services .*\n  rails-posts-pg: PostgreSQL \d+\.\d+: \d+% of a CPU, [\d.]+(us|ms) per request, [\d.]+ MB peak$/, report)
    json, = rackbench("report", "--results", results, "--json")
    figures = JSON.parse(json)["configs"].to_h { |c| [c["dims"]["app"], c["services"]] }
    assert_nil figures["rails-posts"]
    assert_operator figures["rails-posts-pg"].first["cpu_us_per_request"], :>, 0
    csv, = rackbench("report", "--results", results, "--csv")
    header, *rows = CSV.parse(csv)
    pg_row = rows.find { |row| row.include?("rails-posts-pg") }
    assert_operator pg_row[header.index("postgresql_cpu_us_per_request")].to_f, :>, 0

    # The same rows on both: the SQLite file the trial read, and what the
    # app's setup writes into PostgreSQL.
    sqlite_file = Dir.glob(File.join(results, "work", "*-rails-posts-puma-*", PostsDb::FILE_NAME)).first
    assert sqlite_file, "the SQLite trial's database"
    expected = sqlite_rows(sqlite_file)
    assert_equal [PostsDb::AUTHORS, PostsDb::POSTS, PostsDb::REPLIES], expected.values.map(&:size)
    seeded_postgresql { |url| assert_equal expected, postgresql_rows(url) }
  end
end
