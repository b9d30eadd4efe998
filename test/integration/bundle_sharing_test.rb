# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "rackbench/rubies"
require "rackbench/bundle_env"

# Gems compiled once per ruby: one app (without a Gemfile.lock, like many
# apps that do not commit one) under Puma and Unicorn on one ruby. The
# native gem (bcrypt) is compiled by the first environment only; the
# second uses it, at the same version, even though a newer one is out. And
# the other side: an environment that finds no sibling resolves the
# newest version, which it must compile. Counted from Bundler's own log
# lines ("Installing bcrypt X with native extensions" / "Using bcrypt X").
# Real Bundler, the RubyGems mirror, a temporary cache (Puma and Unicorn
# compile their own extensions in it too: a minute or two).
describe "Bundler environments of one ruby share installed gems (integration)" do
  OLDER_BCRYPT = "3.1.20"

  before do
    @tmp = Dir.mktmpdir("rackbench-sharing-int")
    @app = File.join(@tmp, "app")
    FileUtils.mkdir_p(@app)
    # rack-session: locked against Rack 3 in Puma's environment, Rack 2 in
    # Unicorn's (whose lines pin rack < 3).
    File.write(File.join(@app, "Gemfile"), "source \"https://rubygems.org\"\ngem \"bcrypt\"\ngem \"rack-session\"\n")
    File.write(File.join(@app, "config.ru"), "run ->(_env) { [200, {}, [\"ok\"]] }\n")
  end

  after { FileUtils.rm_rf(@tmp) }

  let(:install) { Rackbench::Rubies.resolve({ ruby: "ruby" }, installs: Rackbench::Rubies.discover(home: @tmp)).install }

  def bundle(server, extra: Rackbench::Servers.fetch(server).gem_lines("ruby"))
    Rackbench::BundleEnv.new(app_dir: @app, install: install, root: File.join(@tmp, "cache"), gemfile_extra: extra,
                             parent_env: ENV.to_h.reject { |name, _| name.start_with?("BUNDLE") })
  end

  def bcrypt_lines(env)
    File.readlines(env.log_path, chomp: true).grep(/\A(Installing|Using) bcrypt /)
  end

  it "compiles bcrypt in the first server's environment only, and again only where no sibling is found" do
    puma = bundle("puma")
    # As if Puma's environment had been made before the newest bcrypt came
    # out: its lockfile holds an older one.
    FileUtils.mkdir_p(puma.dir)
    File.write(puma.lockfile_path, "GEM\n  remote: https://rubygems.org/\n  specs:\n    bcrypt (#{OLDER_BCRYPT})\n\n" \
                                   "PLATFORMS\n  ruby\n\nDEPENDENCIES\n  bcrypt\n")
    assert_equal :installed, puma.ensure_installed!
    assert_equal ["Installing bcrypt #{OLDER_BCRYPT} with native extensions"], bcrypt_lines(puma)

    unicorn = bundle("unicorn")
    assert_equal :installed, unicorn.ensure_installed!
    assert_equal ["Using bcrypt #{OLDER_BCRYPT}"], bcrypt_lines(unicorn), "compiled once per ruby"
    assert_equal OLDER_BCRYPT, unicorn.gem_versions["bcrypt"]
    assert unicorn.gem_versions.key?("unicorn")
    assert_operator Gem::Version.new(unicorn.gem_versions["rack"]), :<, Gem::Version.new("3")
    assert_operator Gem::Version.new(puma.gem_versions["rack"]), :>=, Gem::Version.new("3")

    # Seeded from Unicorn's (the newest): bcrypt is carried over, Rack 2
    # and rack-session locked against it are Unicorn's and stay there.
    webrick = bundle("webrick")
    assert_equal :installed, webrick.ensure_installed!
    assert_equal ["Using bcrypt #{OLDER_BCRYPT}"], bcrypt_lines(webrick)
    assert_operator Gem::Version.new(webrick.gem_versions["rack"]), :>=, Gem::Version.new("3")

    # The other side: with no sibling to learn from, an environment
    # resolves the newest bcrypt and compiles it.
    Dir.glob(File.join(@tmp, "cache", "*", Rackbench::BundleEnv::Siblings::MARK_FILE)).each { |f| File.delete(f) }
    alone = bundle(nil, extra: ['gem "rackup"'])
    assert_equal :installed, alone.ensure_installed!
    newest = alone.gem_versions["bcrypt"]
    refute_equal OLDER_BCRYPT, newest, "the mirror has a newer bcrypt"
    assert_equal ["Installing bcrypt #{newest} with native extensions"], bcrypt_lines(alone)
  end
end
