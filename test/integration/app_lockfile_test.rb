# frozen_string_literal: true

require "test_helper"
require "open3"
require "rbconfig"
require "support/test_rubies"
require "support/redmine_app"

# An app nobody here wrote, with its own Gemfile.lock and native gems:
# Redmine 6.0.5 as Debian packages it (test/support/redmine_app.rb). Its
# lock is the gem set: on 3.1 and 3.3 every server process loads exactly
# the locked versions. Its Gemfile allows no Ruby 3.4, so an experiment
# with 3.4 stops before any trial, with the line that says why.
describe "an app with its own lockfile (integration)" do
  before { require_engine! }

  let(:dir) { Dir.mktmpdir("rackbench-app-lockfile") }
  after { FileUtils.rm_rf(dir) }

  def experiment(rubies)
    file = File.join(dir, "redmine.yml")
    File.write(file, <<~YAML)
      name: redmine
      rubies: #{rubies}
      servers: [puma]
      apps:
        - name: redmine
          path: #{RedmineApp.dir}
          health: /login
          load_path: /login
          expect_body: "Redmine"
          setup: bin/rake db:migrate
      processes: 2
      load: { connections: 2, duration: 0.5s, warmup: 0.5s, timeout: 20s }
    YAML
    file
  end

  def run_rackbench(file)
    results = File.join(dir, "results")
    out, err, status = rackbench("run", file, "--results", results, stdin_data: "")
    [out, err, status, results]
  end

  it "keeps exactly Redmine's locked versions on 3.1 and 3.3, in every server process" do
    out, err, status, results = run_rackbench(experiment("[ruby, { name: r33, build: { source: #{TestRubies.tarball("3.3")} } }]"))

    assert status.success?, "run failed: #{err}\n#{out.lines.last(30).join}"
    assert_match(/^Gems: redmine \+ puma: one gem set, resolved on ruby \(ruby 3\.1\.\d+\S*\), installed as is for r33$/, out)
    locked = RedmineApp.locked_versions
    trials = Rackbench::Store.open(results, &:trials)
    assert_equal %w[r33 ruby], trials.map(&:ruby).sort
    trials.each do |trial|
      assert_equal "ok", trial.status, "#{trial.ruby}: #{trial.reason}"
      assert_equal 3, trial.identity["processes"].size, "#{trial.ruby}: Puma's master and 2 workers checked"
      assert_empty trial.identity["mismatches"], trial.ruby
      loaded = trial.identity["gems"]
      # Native gems among them, the Rails the app locks, and the thin its
      # Gemfile.local names.
      %w[nokogiri sqlite3 commonmarker eventmachine rails puma thin].each do |name|
        assert_equal locked.fetch(name), loaded[name], "#{trial.ruby}: #{name} as locked"
      end
      assert_equal locked.slice(*loaded.keys), loaded, "#{trial.ruby}: every gem it loaded at the locked version"
      assert_operator loaded.size, :>, 80, trial.ruby
      assert_equal locked.except("bundler"), trial.gem_versions.except("bundler"),
                   "#{trial.ruby}: its environment locks the app's lock, nothing more or less"
    end
  end

  it "stops before any trial when the newest ruby cannot run the lock, saying why in one line" do
    rubies = "[ruby, { name: r34, build: { source: #{TestRubies.tarball("3.4")} } }]"

    out, err, status, results = run_rackbench(experiment(rubies))

    refute status.success?, out
    line = err.lines.grep(/\Arackbench: /).last.to_s
    assert_match(/\Arackbench: cannot install the gem set of redmine \+ puma \(resolved on ruby \(ruby 3\.1\.\d+\S*\)\) on r34 \(ruby 3\.4\.5\): .*Your Ruby version is 3\.4\.5, but your Gemfile specified >= 3\.1\.0, < 3\.4\.0 \(log: .*bundle-redmine-r34-puma\.log\)\n\z/,
                 line)
    assert_empty Rackbench::Store.open(results, &:trials), "no trial ran"
    refute_match(/\] 1\/2 /, out, "no trial started")
  end
end
