# frozen_string_literal: true

require "test_helper"
require "fileutils"

# The warning before a run about a user's database.yml whose pool is a
# fixed number below the threads.
describe Rackbench::Trial::Http::PoolCheck do
  PoolCheck = Rackbench::Trial::Http::PoolCheck
  Spec = Rackbench::Experiment::AppSpec

  before { @tmp = Dir.mktmpdir("rackbench-pool") }
  after { FileUtils.rm_rf(@tmp) }

  def app(database_yml, name: "mine", env: {}, builtin: false)
    dir = File.join(@tmp, name)
    FileUtils.mkdir_p(File.join(dir, "config"))
    File.write(File.join(dir, "config", "database.yml"), database_yml) if database_yml
    Spec.new(name: name, builtin: builtin, path: dir, env: env)
  end

  RAILS_DEFAULT = <<~YAML
    default: &default
      adapter: sqlite3
      pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>
      timeout: 5000
    development:
      <<: *default
      database: db/development.sqlite3
      pool: 2
    production:
      <<: *default
      database: db/production.sqlite3
  YAML

  FIXED = <<~YAML
    default: &default
      adapter: postgresql
      pool: 5
    production:
      <<: *default
      database: app_production
  YAML

  it "names the file and the value when production's pool is fixed below the threads" do
    spec = app(FIXED)
    assert_equal ["warning: #{spec.path}/config/database.yml: pool: 5 for production is below the 8 threads per " \
                  "process of this experiment: threads will wait for a database connection (write pool: <%= " \
                  "ENV.fetch(\"RAILS_MAX_THREADS\") { 5 } %> to follow the threads)"],
                 PoolCheck.warnings([spec], 8)
  end

  it "says nothing when the pool is enough, follows RAILS_MAX_THREADS, or there is no database.yml" do
    assert_empty PoolCheck.warnings([app(FIXED)], 5)
    assert_empty PoolCheck.warnings([app(RAILS_DEFAULT, name: "default")], 64), "ERB: follows the threads"
    assert_empty PoolCheck.warnings([app(nil, name: "none")], 64)
    assert_empty PoolCheck.warnings([app("production: [unclosed\n", name: "broken")], 64)
  end

  it "reads the section of the app's RAILS_ENV, and each database of a multi-database section" do
    assert_match(/pool: 2 for development/, PoolCheck.warnings([app(RAILS_DEFAULT, env: { "RAILS_ENV" => "development" })], 4).first)
    multi = app(<<~YAML, name: "multi")
      production:
        primary: { adapter: sqlite3, database: a, pool: 16 }
        cache: { adapter: sqlite3, database: b, pool: 3 }
    YAML
    assert_match(/pool: 3 for production/, PoolCheck.warnings([multi], 4).first)
  end

  it "leaves built-in apps alone" do
    assert_empty PoolCheck.warnings([app(FIXED, builtin: true)], 64)
  end
end
