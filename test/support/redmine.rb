# frozen_string_literal: true

require "digest"
require "fileutils"
require "open3"
require "tmpdir"

# Redmine, a real Rails app nobody here wrote, for the integration tests
# that need one (an app with its own Gemfile and Gemfile.lock, a
# PostgreSQL schema of some 300 migrations, logins through a CSRF-protected
# form): Debian's redmine package at a pinned version, fetched with
# `apt-get download` (checked against its SHA-256) and unpacked with
# `dpkg -x`, never installed. Prepared once per machine into a directory of
# the system's tmp (kept, so that its Bundler environment is found again):
#
#   app = RedmineApp.prepare   # => "/tmp/rackbench-test-redmine-5.0.4-5+deb12u1/redmine"
#
# What preparing changes in Debian's tree, each for a reason:
# - symbolic links into /etc and /var/lib (Debian's instances) and to
#   Debian's JavaScript packages are removed: nothing here is installed;
# - config/database.yml takes DATABASE_URL (the PostgreSQL rackbench starts);
# - Gemfile.local (Redmine's own place for more gems) adds pg, which its
#   Gemfile would pick from a database.yml under /usr/share/redmine, redis
#   (the cache store), blankslate (Debian's Redmine takes it from a package
#   of its own), and keeps concurrent-ruby below 1.3.5 (Rails 6.1 fails to
#   boot with 1.3.5);
# - the Gemfile's last lines ("Load thin gem if available": `require
#   'thin'` while Bundler reads the Gemfile) go: they activate whatever thin
#   and rack the gem path holds before Bundler resolves, and rackbench's
#   shared gem directory holds thin 2 with rack 3 once a thin experiment
#   ran, against Rails 6.1's rack 2;
# - Gemfile.lock is the one in test/fixtures/redmine/, resolved once from
#   this Gemfile on the RubyGems mirror: the app brings its own lock, and
#   no test depends on the mirror's newest versions;
# - config/additional_environment.rb (Redmine's own hook) undoes Debian's
#   instances (its log, tmp and database.yml go back to the app's own
#   directories) and puts Rails' cache in Redis (REDIS_URL);
# - lib/tasks/rackbench.rake seeds the benchmark's data: the users of
#   test/fixtures/redmine/users.csv (copied to db/rackbench-users.csv), a
#   public project, 40 issues assigned to them in turn; SETUP runs the
#   migrations, Redmine's default data and that seed (the app's `setup`).
#
# A mirror that lacks the package or a package whose digest differs fails
# with one line naming what to do; nothing is skipped.
module RedmineApp
  PACKAGE = "redmine"
  VERSION = "5.0.4-5+deb12u1"
  SHA256 = "d4ef5a30d641853a273d45c961ade38f83fe28146c36a0006f8fd63313496146"
  ROOT = File.join(Dir.tmpdir, "rackbench-test-redmine-#{VERSION}")
  FIXTURES = File.expand_path("../fixtures/redmine", __dir__)
  # Four users (login,password), each with their own password.
  USERS_CSV = File.join(FIXTURES, "users.csv")
  # The request list that logs each connection in as its own user.
  REQUESTS = File.join(FIXTURES, "redmine.requests")
  # The app's setup command (its `setup:` in an experiment).
  SETUP = "script/rackbench_setup.rb"
  # The secret Redmine's cookies are signed with (SECRET_KEY_BASE): fixed,
  # so that every process of a server agrees; nothing of value is signed.
  SECRET_KEY_BASE = "rackbench-redmine-test-#{"0" * 64}"

  module_function

  # The prepared app's directory (prepared now unless it already is).
  # Raises RuntimeError with one line when the package cannot be had.
  def prepare
    app = File.join(ROOT, "redmine")
    FileUtils.mkdir_p(ROOT)
    File.open(File.join(ROOT, "prepare.lock"), File::RDWR | File::CREAT) do |lock|
      lock.flock(File::LOCK_EX)
      done = File.join(ROOT, "prepared")
      unless File.exist?(done) && File.read(done) == fingerprint
        FileUtils.rm_rf(app)
        unpack(download, app)
        configure(app)
        File.write(done, fingerprint)
      end
    end
    app
  end

  # The users' logins, in users.csv's order.
  def logins
    File.readlines(USERS_CSV, chomp: true).drop(1).map { |line| line.split(",").first }
  end

  # What the prepared tree depends on: the package and this file's
  # preparation (a change to either prepares it again).
  def fingerprint
    Digest::SHA256.hexdigest([SHA256, File.read(__FILE__), *Dir[File.join(FIXTURES, "*")].sort.map { |f| File.read(f) }].join("\0"))
  end

  def download
    deb = File.join(ROOT, "#{PACKAGE}_#{VERSION.sub(/\A\d+:/, "")}_all.deb")
    unless File.exist?(deb) && Digest::SHA256.file(deb).hexdigest == SHA256
      out, status = Open3.capture2e("apt-get", "download", "#{PACKAGE}=#{VERSION}", chdir: ROOT)
      unless status.success? && File.exist?(deb)
        raise "Redmine #{VERSION} could not be downloaded with apt-get download (the Debian mirror lacks it? run " \
              "apt-get update): #{out.lines.map(&:strip).reject(&:empty?).last}"
      end
    end
    actual = Digest::SHA256.file(deb).hexdigest
    raise "#{deb}: SHA-256 #{actual}, expected #{SHA256}: not the pinned Redmine #{VERSION}" unless actual == SHA256

    deb
  end

  def unpack(deb, app)
    tree = File.join(ROOT, "tree")
    FileUtils.rm_rf(tree)
    out, status = Open3.capture2e("dpkg", "-x", deb, tree)
    raise "dpkg -x #{deb} failed: #{out.strip}" unless status.success?

    FileUtils.cp_r(File.join(tree, "usr/share/redmine"), app)
    FileUtils.rm_rf(tree)
    Dir.glob(File.join(app, "**", "*"), File::FNM_DOTMATCH).each { |path| File.delete(path) if File.symlink?(path) }
    %w[tmp tmp/pdf tmp/cache log files public/plugin_assets plugins].each { |dir| FileUtils.mkdir_p(File.join(app, dir)) }
  end

  THIN_BLOCK = /^# Load thin gem if available\nbegin\n  require 'thin'\n  gem 'thin'\nrescue LoadError\nend\n/.freeze

  def configure(app)
    gemfile = File.join(app, "Gemfile")
    text = File.read(gemfile)
    raise "#{gemfile}: the thin block to remove is not there (another Redmine?)" unless text.match?(THIN_BLOCK)

    File.write(gemfile, text.sub(THIN_BLOCK, ""))
    File.write(File.join(app, "config/database.yml"), <<~YAML)
      # rackbench's tests: the PostgreSQL rackbench starts (DATABASE_URL).
      production:
        adapter: postgresql
        url: <%= ENV.fetch("DATABASE_URL") %>
        pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>
    YAML
    File.write(File.join(app, "Gemfile.local"), <<~RUBY)
      # rackbench's tests: the database and the cache store's gems.
      gem "pg", "~> 1.2"
      gem "redis", "~> 4.8"
      # Rails 6.1 reads Logger before requiring it; concurrent-ruby 1.3.5
      # stopped requiring it first ("uninitialized constant
      # ActiveSupport::LoggerThreadSafeLevel::Logger"): Redmine 5.0.x's own fix.
      gem "concurrent-ruby", "< 1.3.5"
      # Debian's Redmine requires 'blankslate' from its own package
      # (ruby-blankslate) instead of the copy upstream ships.
      gem "blankslate", "~> 3.1"
    RUBY
    FileUtils.cp(File.join(FIXTURES, "Gemfile.lock"), File.join(app, "Gemfile.lock"))
    File.write(File.join(app, "config/additional_environment.rb"), <<~RUBY)
      # rackbench's tests: one app directory, not Debian's instances
      # (multitenancy_environment.rb moves the log, tmp and database.yml
      # under instances/default/): its log in log/, where rackbench keeps
      # each trial's part of it.
      config.paths["log"] = Rails.root.join("log", "\#{Rails.env}.log").to_s
      config.paths["tmp"] = Rails.root.join("tmp").to_s
      config.paths["config/database"] = Rails.root.join("config", "database.yml").to_s
      # Rails' cache in the Redis rackbench starts.
      config.cache_store = :redis_cache_store, { url: ENV.fetch("REDIS_URL") } if ENV["REDIS_URL"]
    RUBY
    FileUtils.cp(File.join(FIXTURES, "rackbench.rake"), File.join(app, "lib/tasks/rackbench.rake"))
    FileUtils.cp(USERS_CSV, File.join(app, "db/rackbench-users.csv"))
    FileUtils.mkdir_p(File.join(app, "script"))
    FileUtils.cp(File.join(FIXTURES, "rackbench_setup.rb"), File.join(app, SETUP))
  end

  private_class_method :download, :unpack, :configure
end
