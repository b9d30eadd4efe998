# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "json"
require "rackbench/rubies"
require "rackbench/bundle_env"

# A user's app whose Gemfile has a development/test gem that cannot be
# installed here (a path gem whose native extension refuses to build): the
# environment installs when the group is left out (the default for a user's
# app) and the server's Bundler leaves it out too; with bundle_without: []
# the install fails and says why. Real Bundler, the RubyGems mirror (rack
# only), a temporary cache.
describe "Bundler groups of a user's app (integration)" do
  before do
    @tmp = Dir.mktmpdir("rackbench-groups-int")
    @app = File.join(@tmp, "app")
    FileUtils.mkdir_p(@app)
    write_unbuildable_gem(File.join(@tmp, "unbuildable"))
    File.write(File.join(@app, "Gemfile"), <<~RUBY)
      source "https://rubygems.org"
      gem "rack"
      group :development, :test do
        gem "unbuildable", git: #{File.join(@tmp, "unbuildable").inspect}
      end
    RUBY
    File.write(File.join(@app, "config.ru"), "run ->(_env) { [200, {}, [\"ok\"]] }\n")
    File.write(File.join(@app, "report.rb"), <<~RUBY)
      require "json"
      puts JSON.generate("without" => Bundler.settings[:without].map(&:to_s).sort,
                         "unbuildable" => !Gem.loaded_specs["unbuildable"].nil?,
                         "rack" => !Gem.loaded_specs["rack"].nil?)
    RUBY
  end

  after { FileUtils.rm_rf(@tmp) unless ENV["KEEP"] }

  # A gem with a C extension whose extconf.rb aborts, as a gem that needs
  # a missing system library would: in a local git repository, since
  # Bundler builds the extensions of a git gem (not of a path gem).
  def write_unbuildable_gem(dir)
    FileUtils.mkdir_p(File.join(dir, "ext", "unbuildable"))
    File.write(File.join(dir, "unbuildable.gemspec"), <<~RUBY)
      Gem::Specification.new do |s|
        s.name = "unbuildable"
        s.version = "0.0.1"
        s.summary = "rackbench test: cannot be built"
        s.authors = ["rackbench"]
        s.files = ["ext/unbuildable/extconf.rb"]
        s.extensions = ["ext/unbuildable/extconf.rb"]
      end
    RUBY
    File.write(File.join(dir, "ext", "unbuildable", "extconf.rb"),
               "abort 'unbuildable: the libfoo headers are missing'\n")
    git = %w[git -c user.name=rackbench -c user.email=rackbench@localhost -c init.defaultBranch=main]
    [[*git, "init", "-q"], %w[git add -A], [*git, "commit", "-q", "-m", "unbuildable"]].each do |argv|
      assert system(*argv, chdir: dir, out: File::NULL, err: File::NULL), argv.join(" ")
    end
  end

  let(:variant) do
    Rackbench::Rubies.resolve({ ruby: "ruby" }, installs: Rackbench::Rubies.discover(home: @tmp))
  end

  def bundle(bundle_without)
    groups = Rackbench::BundleEnv::Groups.for_app(app_dir: @app, builtin: false, bundle_without: bundle_without,
                                                  parent_env: {})
    Rackbench::BundleEnv.new(app_dir: @app, install: variant.install, root: File.join(@tmp, "cache"),
                             gemfile_extra: [], groups: groups, parent_env: ENV.to_h.reject { |k, _| k.start_with?("BUNDLE") })
  end

  def report(env)
    result = Rackbench::Rubies::Child.run(env.exec_prefix(variant.command) + [File.join(@app, "report.rb")],
                                          env: ENV.to_h.merge(env.env).compact, timeout_s: 120, chdir: @app)
    assert result.success?, result.output
    JSON.parse(result.output.lines.last)
  end

  it "installs without development and test by default, and the server's Bundler leaves them out" do
    env = bundle(nil)
    assert_equal :installed, env.ensure_installed!
    assert_equal %w[development test], env.groups.without
    refute_match(/Installing unbuildable/, File.read(env.log_path))
    assert_equal({ "without" => %w[development test], "unbuildable" => false, "rack" => true }, report(env))
  end

  it "fails with the build's reason when bundle_without: [] installs every group" do
    env = bundle([])
    error = assert_raises(Rackbench::SetupError) { env.ensure_installed! }
    assert_match(/\Abundle install failed for app on ruby: /, error.message)
    assert_match(/unbuildable/, error.message)
    assert_includes File.read(env.log_path), "unbuildable: the libfoo headers are missing"
  end
end
