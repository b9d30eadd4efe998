# frozen_string_literal: true

require "test_helper"

# The lockfile a new environment of an app without a lock of its own starts
# from (BundleEnv::Siblings.seed): a sibling's versions, without the
# servers' gems and without the sibling's platforms, which are its own
# resolution's (a seed whose platforms were all other than the local one
# made Bundler 2.5.22 lock no gem at all).
describe "the seed a sibling environment gives" do
  FakeEnv = Struct.new(:root, :dir, :app_dir, :install_path, :gem_pins, :gemfile_extra, :lock_seed,
                       keyword_init: true) do
    def force_ruby_platform? = false
  end

  SIBLING_LOCK = <<~LOCK
    GEM
      remote: https://rubygems.org/
      specs:
        nio4r (2.7.4)
        nokogiri (1.19.7-x86_64-linux-gnu)
          racc (~> 1.4)
        puma (7.1.0)
          nio4r (~> 2.0)
        racc (1.8.1)
        vernier (1.9.0)

    PLATFORMS
      aarch64-linux-gnu
      x86_64-linux-gnu

    DEPENDENCIES
      nokogiri
      puma
      vernier (>= 1.0)

    BUNDLED WITH
       2.5.22
  LOCK

  let(:root) { Dir.mktmpdir("rackbench-siblings") }
  after { FileUtils.rm_rf(root) }

  def env(name, extra)
    FakeEnv.new(root: root, dir: File.join(root, name), app_dir: "/apps/page", install_path: "/gems/ruby-3.3.0",
                gem_pins: {}, gemfile_extra: extra)
  end

  it "keeps the sibling's versions, drops the servers' gems, and leaves the platform to Bundler" do
    sibling = env("page-a", ['gem "puma"', 'gem "vernier", ">= 1.0", require: false'])
    FileUtils.mkdir_p(sibling.dir)
    File.write(File.join(sibling.dir, Rackbench::BundleEnv::Siblings::MARK_FILE),
               JSON.generate("app_dir" => sibling.app_dir, "install_path" => sibling.install_path,
                             "gemfile_extra" => sibling.gemfile_extra, "gem_pins" => {}, "seeded" => false,
                             "force_ruby_platform" => false))
    File.write(File.join(sibling.dir, "Gemfile.lock"), SIBLING_LOCK)

    seed = Rackbench::BundleEnv::Siblings.seed(env("page-b", ['gem "puma"']))
    assert_equal({ "bundler" => "2.5.22", "nokogiri" => "1.19.7", "racc" => "1.8.1", "nio4r" => "2.7.4" }.sort.to_h,
                 Rackbench::BundleEnv::Lockfile.gem_versions(seed))
    refute_match(/PLATFORMS|x86_64-linux-gnu\n|aarch64/, seed)
    assert_match(/^DEPENDENCIES\n  nokogiri\n\n/, seed, "the servers' entries gone, with or without a requirement")
  end

  it "takes out a PLATFORMS section whole, and nothing else" do
    text = "GEM\n  specs:\n    rack (3.1.8)\n\nPLATFORMS\n  ruby\n  x86_64-linux\n\nDEPENDENCIES\n  rack\n"
    assert_equal "GEM\n  specs:\n    rack (3.1.8)\n\nDEPENDENCIES\n  rack\n",
                 Rackbench::BundleEnv::Lockfile.without_platforms(text)
    plain = "GEM\n  specs:\n    rack (3.1.8)\n\nDEPENDENCIES\n  rack\n"
    assert_equal plain, Rackbench::BundleEnv::Lockfile.without_platforms(plain)
  end
end
