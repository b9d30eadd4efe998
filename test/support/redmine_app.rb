# frozen_string_literal: true

require "digest"
require "fileutils"
require "support/test_rubies"

# A real Rails app nobody here wrote, with its own Gemfile.lock and native
# gems (nokogiri, sqlite3, commonmarker, eventmachine): Redmine as Debian
# packages it, taken from the package (never installed) and set up as one
# instance the way Debian's redmine-instances does it:
#
# - the package, pinned by version and SHA-256, is downloaded once with
#   apt-get through a private configuration naming only its suite (the
#   machine's sources are never read or changed), kept in the cache's
#   sources/, and extracted with dpkg -x;
# - what the package links to other packages' files, which are not
#   installed, is replaced: the JavaScript libraries (empty files: the
#   pages still name them, the load engine never fetches them), the
#   database configuration and the instances directory;
# - the instance's files come from test/fixtures/apps/redmine: its
#   Gemfile.lock, generated once through the RubyGems mirror with Ruby
#   3.1.2's Bundler (2.3.15), its Gemfile.local (the database adapters:
#   sqlite3 for the instance's database.yml, pg for the PostgreSQL that
#   services: starts and names in DATABASE_URL; redis for Rails' cache
#   there; and thin, which Redmine's Gemfile otherwise declares only when
#   the gem directory happens to hold it) and its database.yml;
# - for the benchmark on services (test/integration/redmine_test.rb):
#   SETUP (script/rackbench_setup.rb: Redmine's migrations, its default
#   data and lib/tasks/rackbench.rake's seed, each in a process of its
#   own), the users of USERS_CSV (db/rackbench-users.csv) the seed makes
#   and REQUESTS logs in as, and config/additional_environment.rb, which
#   puts Rails' cache in Redis when REDIS_URL is set.
#
# Redmine 6.0's Gemfile says `ruby '>= 3.1.0', '< 3.4.0'`: it runs on 3.1
# and 3.3, not on 3.4, which is what the tests need of it.
#
# The prepared app lives under the worktree's tmp/test-apps (gitignored),
# at a path that does not change, so its Bundler environments are reused
# from one run of the tests to the next.
module RedmineApp
  PACKAGE = { name: "redmine", version: "6.0.5+ds-1", suite: "trixie", file: "redmine_6.0.5+ds-1_all.deb",
              sha256: "8671dd48d8c099fbaf24d86c882ad5c8167ae4884ba5a25fdb0326e2ef0aab80" }.freeze
  FIXTURES = File.expand_path("../fixtures/apps/redmine", __dir__)
  DIR = File.expand_path("../../tmp/test-apps/redmine-#{PACKAGE[:version]}", __dir__)
  SECRET_KEY = "rackbench-test-instance-not-a-secret-#{"0" * 64}"
  # Debian's package links these to libjs-* and ruby-jquery-rails files.
  JAVASCRIPTS = %w[jquery-ui.min.js jquery_ujs.js chart.min.js raphael.js jquery.min.js].freeze
  # Four users (login,password), each with their own password.
  USERS_CSV = File.join(FIXTURES, "users.csv")
  # The request list that logs each connection in as its own user.
  REQUESTS = File.join(FIXTURES, "redmine.requests")
  # The app's setup command (its `setup:` in an experiment).
  SETUP = "script/rackbench_setup.rb"

  module_function

  # The prepared app's directory (prepared once). Raises
  # TestRubies::Unavailable when the package cannot be had.
  def dir
    TestRubies.locked(File.join(File.dirname(DIR), ".lock")) do
      marker = File.join(DIR, ".prepared")
      prepare unless File.file?(marker) && File.read(marker) == prepared_text
    end
    DIR
  end

  # What the marker of a prepared app holds: the package and a digest of
  # the fixtures it was prepared from and of this file, which writes the
  # rest (a change to any of them prepares it again: a few seconds; the
  # Bundler environments, kept elsewhere, are found again).
  def prepared_text
    fixtures = Dir[File.join(FIXTURES, "*")].sort.map { |path| "#{File.basename(path)}\0#{File.read(path)}" }
    "#{PACKAGE[:file]} #{Digest::SHA256.hexdigest([File.read(__FILE__), *fixtures].join("\0"))}\n"
  end

  # The users' logins, in USERS_CSV's order.
  def logins
    File.readlines(USERS_CSV, chomp: true).drop(1).map { |line| line.split(",").first }
  end

  # gem name => version, as the app's Gemfile.lock locks them.
  def locked_versions
    Rackbench::BundleEnv::Lockfile.gem_versions(File.read(File.join(FIXTURES, "Gemfile.lock")))
  end

  def prepare
    staging = "#{DIR}.staging-#{Process.pid}"
    FileUtils.rm_rf([staging, DIR])
    TestRubies.run!("dpkg", "-x", package, staging, what: "extract #{PACKAGE[:file]}")
    app = File.join(staging, "usr", "share", "redmine")
    instance(app)
    File.write(File.join(app, ".prepared"), prepared_text)
    File.rename(app, DIR)
  ensure
    FileUtils.rm_rf(staging) if staging
  end

  def instance(app)
    %w[Gemfile.lock config/database.yml instances].each { |link| File.delete(File.join(app, link)) }
    JAVASCRIPTS.each do |name|
      path = File.join(app, "app", "assets", "javascripts", name)
      File.delete(path)
      File.write(path, "")
    end
    FileUtils.cp(File.join(FIXTURES, "Gemfile.lock"), app)
    FileUtils.cp(File.join(FIXTURES, "Gemfile.local"), app)
    root = File.join(app, "instances", "default")
    FileUtils.mkdir_p(%w[config db log tmp public files].map { |sub| File.join(root, sub) })
    FileUtils.cp(File.join(FIXTURES, "database.yml"), File.join(root, "config"))
    File.write(File.join(root, "config", "secret_key.txt"), SECRET_KEY)
    benchmark(app)
  end

  # What the benchmark on services adds (see the top of this file).
  def benchmark(app)
    FileUtils.cp(File.join(FIXTURES, "rackbench.rake"), File.join(app, "lib", "tasks"))
    FileUtils.cp(USERS_CSV, File.join(app, "db", "rackbench-users.csv"))
    FileUtils.mkdir_p(File.join(app, "script"))
    FileUtils.cp(File.join(FIXTURES, "rackbench_setup.rb"), File.join(app, SETUP))
    File.write(File.join(app, "config", "additional_environment.rb"), <<~RUBY)
      # rackbench's tests: Rails' cache in the Redis that services: starts.
      config.cache_store = :redis_cache_store, { url: ENV.fetch("REDIS_URL") } if ENV["REDIS_URL"]
    RUBY
  end

  # The package, from the cache's sources/ or downloaded there first.
  def package
    sources = File.join(Rackbench::CacheRoot.path, "sources")
    path = File.join(sources, PACKAGE[:file])
    FileUtils.mkdir_p(sources)
    TestRubies.locked(File.join(sources, ".lock")) do
      download(sources) unless File.file?(path) && TestRubies.digest(path) == PACKAGE[:sha256]
    end
    path
  end

  # apt-get download through a private configuration: its own sources
  # list (the package's suite only), lists and cache directories, removed
  # once the package is there.
  def download(sources)
    apt = File.join(sources, "apt-#{PACKAGE[:suite]}-binary")
    lists = File.join(apt, "lists")
    FileUtils.mkdir_p([File.join(lists, "partial"), File.join(apt, "cache", "archives", "partial")])
    list = File.join(apt, "sources.list")
    keyring = TestRubies::DEBIAN_KEYRING
    signed = File.file?(keyring) ? "[signed-by=#{keyring}]" : "[trusted=yes]"
    File.write(list, "deb #{signed} #{TestRubies.mirror} #{PACKAGE[:suite]} main\n")
    options = ["-o", "Dir::Etc::SourceList=#{list}", "-o", "Dir::Etc::SourceParts=/dev/null",
               "-o", "Dir::State::Lists=#{lists}", "-o", "Dir::State::status=/dev/null",
               "-o", "Dir::Cache=#{File.join(apt, "cache")}", "-o", "APT::Sandbox::User=root"]
    TestRubies.run!("apt-get", *options, "update", what: "read the #{PACKAGE[:suite]} index from #{TestRubies.mirror}")
    work = File.join(apt, "download")
    FileUtils.rm_rf(work)
    FileUtils.mkdir_p(work)
    result = TestRubies.run("apt-get", *options, "download", "#{PACKAGE[:name]}=#{PACKAGE[:version]}", chdir: work)
    got = File.join(work, PACKAGE[:file])
    unless File.file?(got)
      raise TestRubies::Unavailable,
            "the Debian mirror #{TestRubies.mirror} no longer has #{PACKAGE[:name]} #{PACKAGE[:version]} " \
            "(suite #{PACKAGE[:suite]}): update RedmineApp::PACKAGE (test/support/redmine_app.rb) to a version it has, " \
            "and its Gemfile.lock in test/fixtures/apps/redmine (apt-get said: " \
            "#{result.output.to_s.lines.grep(/E:/).first.to_s.strip})"
    end
    actual = TestRubies.digest(got)
    unless actual == PACKAGE[:sha256]
      raise TestRubies::Unavailable, "#{PACKAGE[:file]} from #{TestRubies.mirror} has sha256 #{actual}, " \
                                     "not the pinned #{PACKAGE[:sha256]}"
    end

    File.rename(got, File.join(sources, PACKAGE[:file]))
  ensure
    FileUtils.rm_rf(apt) # the suite's lists: tens of MB, needed only for this download
  end
end
