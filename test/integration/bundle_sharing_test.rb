# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "rackbench/rubies"
require "rackbench/bundle_env"

# Gems compiled once per ruby: one app (without a Gemfile.lock, like many
# apps that do not commit one) in three environments of one ruby. The
# native gem (bcrypt) is compiled by the first environment only; the
# second uses it, at the same version, even though a newer one is out. And
# the other side: an environment that finds no sibling resolves the
# newest version, which it must compile. Counted from Bundler's own log
# lines ("Installing bcrypt X with native extensions" / "Using bcrypt X").
# Real Bundler, the RubyGems mirror, a temporary cache. The environments'
# extra lines stand for two servers' (Rack 3 for one, Rack 2 for the
# other, as Puma's and Unicorn's are) without their own C extensions, which
# would only make the test minutes longer: bcrypt is the one compiled.
describe "Bundler environments of one ruby share installed gems (integration)" do
  OLDER_BCRYPT = "3.1.20"

  before do
    @tmp = Dir.mktmpdir("rackbench-sharing-int")
    @app = File.join(@tmp, "app")
    FileUtils.mkdir_p(@app)
    # rack-session: locked against Rack 3 in the first environment, Rack 2
    # in the second (whose lines pin rack < 3, as Unicorn's do).
    File.write(File.join(@app, "Gemfile"), "source \"https://rubygems.org\"\ngem \"bcrypt\"\ngem \"rack-session\"\n")
    File.write(File.join(@app, "config.ru"), "run ->(_env) { [200, {}, [\"ok\"]] }\n")
  end

  after { FileUtils.rm_rf(@tmp) }

  let(:install) { Rackbench::Rubies.resolve({ ruby: "ruby" }, installs: Rackbench::Rubies.discover(home: @tmp)).install }

  RACK3_LINES = ['gem "webrick"'].freeze
  RACK2_LINES = ['gem "webrick"', 'gem "rack", "< 3"'].freeze

  def bundle(extra)
    Rackbench::BundleEnv.new(app_dir: @app, install: install, root: File.join(@tmp, "cache"), gemfile_extra: extra,
                             parent_env: ENV.to_h.reject { |name, _| name.start_with?("BUNDLE") })
  end

  def bcrypt_lines(env)
    File.readlines(env.log_path, chomp: true).grep(/\A(Installing|Using) bcrypt /)
  end

  it "compiles bcrypt in the first environment only, and again only where no sibling is found" do
    first = bundle(RACK3_LINES)
    # As if the first environment had been made before the newest bcrypt came
    # out: its lockfile holds an older one.
    FileUtils.mkdir_p(first.dir)
    File.write(first.lockfile_path, "GEM\n  remote: https://rubygems.org/\n  specs:\n    bcrypt (#{OLDER_BCRYPT})\n\n" \
                                   "PLATFORMS\n  ruby\n\nDEPENDENCIES\n  bcrypt\n")
    assert_equal :installed, first.ensure_installed!
    assert_equal ["Installing bcrypt #{OLDER_BCRYPT} with native extensions"], bcrypt_lines(first)

    second = bundle(RACK2_LINES)
    assert_equal :installed, second.ensure_installed!
    assert_equal ["Using bcrypt #{OLDER_BCRYPT}"], bcrypt_lines(second), "compiled once per ruby"
    assert_equal OLDER_BCRYPT, second.gem_versions["bcrypt"]
    assert second.gem_versions.key?("webrick")
    assert_operator Gem::Version.new(second.gem_versions["rack"]), :<, Gem::Version.new("3")
    assert_operator Gem::Version.new(first.gem_versions["rack"]), :>=, Gem::Version.new("3")

    # Seeded from the second (the newest): bcrypt is carried over, Rack 2
    # and rack-session locked against it are the second's and stay there.
    third = bundle(Rackbench::Servers.fetch("webrick").gem_lines("ruby"))
    assert_equal :installed, third.ensure_installed!
    assert_equal ["Using bcrypt #{OLDER_BCRYPT}"], bcrypt_lines(third)
    assert_operator Gem::Version.new(third.gem_versions["rack"]), :>=, Gem::Version.new("3")

    # The other side: with no sibling to learn from, an environment
    # resolves the newest bcrypt and compiles it.
    Dir.glob(File.join(@tmp, "cache", "*", Rackbench::BundleEnv::Siblings::MARK_FILE)).each { |f| File.delete(f) }
    alone = bundle(['gem "rackup"'])
    assert_equal :installed, alone.ensure_installed!
    newest = alone.gem_versions["bcrypt"]
    refute_equal OLDER_BCRYPT, newest, "the mirror has a newer bcrypt"
    assert_equal ["Installing bcrypt #{newest} with native extensions"], bcrypt_lines(alone)
  end
end
