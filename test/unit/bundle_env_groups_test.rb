# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "yaml"
require "rackbench/rubies"
require "rackbench/bundle_env"

# Which Gemfile groups an environment installs: the experiment's
# bundle_without, the app's .bundle/config, BUNDLE_WITHOUT/BUNDLE_WITH in
# the shell, the default for a user's app; written into the environment's
# own .bundle/config and part of its digest.
describe Rackbench::BundleEnv::Groups do
  Groups = Rackbench::BundleEnv::Groups

  before do
    @tmp = Dir.mktmpdir("rackbench-groups")
    @app = File.join(@tmp, "app")
    FileUtils.mkdir_p(@app)
    File.write(File.join(@app, "Gemfile"), "source \"https://rubygems.org\"\ngem \"rack\"\n")
  end

  after { FileUtils.rm_rf(@tmp) }

  def app_config(settings)
    FileUtils.mkdir_p(File.join(@app, ".bundle"))
    File.write(File.join(@app, ".bundle", "config"), settings.is_a?(String) ? settings : YAML.dump(settings))
  end

  def groups(builtin: false, bundle_without: nil, parent_env: {})
    Groups.for_app(app_dir: @app, builtin: builtin, bundle_without: bundle_without, parent_env: parent_env)
  end

  it "leaves out development and test for a user's app that says nothing" do
    result = groups
    assert_equal %w[development test], result.without
    assert_empty result.with
    assert_equal "default for your own app", result.without_from
    assert_equal({ "BUNDLE_WITHOUT" => "development:test" }, result.settings)
  end

  it "installs every group of a built-in app, as before" do
    result = groups(builtin: true, parent_env: { "BUNDLE_WITHOUT" => "production" })
    assert_empty result.without
    assert_predicate result, :none?
    assert_empty result.settings
  end

  it "takes the app's .bundle/config, in Bundler's own format" do
    app_config("BUNDLE_WITHOUT" => "development:test:assets", "BUNDLE_WITH" => "production")
    result = groups(parent_env: { "BUNDLE_WITHOUT" => "ci" })
    assert_equal %w[assets development test], result.without
    assert_equal %w[production], result.with
    assert_equal File.join(@app, ".bundle", "config"), result.without_from
    assert_equal File.join(@app, ".bundle", "config"), result.with_from
  end

  it "reads a space-separated or list value too" do
    app_config("---\nBUNDLE_WITHOUT: \"development test\"\n")
    assert_equal %w[development test], groups.without
    app_config("---\nBUNDLE_WITHOUT:\n- lint\n")
    assert_equal %w[lint], groups.without
  end

  it "takes BUNDLE_WITHOUT and BUNDLE_WITH from the shell when the app's file says nothing of them" do
    app_config("BUNDLE_JOBS" => "4")
    result = groups(parent_env: { "BUNDLE_WITHOUT" => "ci:lint", "BUNDLE_WITH" => "extra" })
    assert_equal %w[ci lint], result.without
    assert_equal %w[extra], result.with
    assert_equal "BUNDLE_WITHOUT in the environment", result.without_from
  end

  it "lets the experiment's bundle_without win over the app's file and the shell; [] installs every group" do
    app_config("BUNDLE_WITHOUT" => "development:test", "BUNDLE_WITH" => "production")
    result = groups(bundle_without: %w[test], parent_env: { "BUNDLE_WITHOUT" => "ci" })
    assert_equal %w[test], result.without
    assert_equal "experiment", result.without_from
    assert_equal %w[production], result.with, "with still comes from the app"

    everything = groups(bundle_without: [])
    assert_empty everything.without
    assert_equal "experiment", everything.without_from
    assert_equal(%w[test], groups(builtin: true, bundle_without: %w[test]).without)
  end

  it "names an app's .bundle/config that is not YAML" do
    app_config("BUNDLE_WITHOUT: [unclosed\n")
    error = assert_raises(Rackbench::SetupError) { groups }
    assert_match(%r{\A#{Regexp.escape(File.join(@app, ".bundle", "config"))}: not YAML}, error.message)
    app_config("- a list\n")
    assert_match(/not a YAML mapping/, assert_raises(Rackbench::SetupError) { groups }.message)
  end

  describe "in a BundleEnv" do
    let(:install) do
      Rackbench::Rubies::Install.new(name: "ruby", path: "/usr/bin/ruby3.1", source: :path, engine: "ruby",
                                     version: "3.1.2", abi_version: "3.1.0", description: "ruby 3.1.2", jit: [],
                                     bundler_bin: "/fake/bundle")
    end

    def env(groups)
      Rackbench::BundleEnv.new(app_dir: @app, install: install, root: File.join(@tmp, "cache"), groups: groups)
    end

    it "changes the digest with the groups, and keeps the old digest for every group" do
      all = env(Groups.all)
      default = env(groups)
      refute_equal all.digest, default.digest
      refute_equal default.digest, env(groups(bundle_without: %w[test])).digest
      assert_equal all.digest, Rackbench::BundleEnv.new(app_dir: @app, install: install,
                                                        root: File.join(@tmp, "cache")).digest
      assert_equal all.digest, env(groups(bundle_without: [])).digest, "[] is every group"
    end

    it "writes the groups into the environment's own .bundle/config, nothing for every group" do
      default = env(groups)
      FileUtils.mkdir_p(default.app_config_dir)
      default.send(:write_files)
      config = YAML.safe_load(File.read(File.join(default.app_config_dir, "config")))
      assert_equal({ "BUNDLE_WITHOUT" => "development:test" }, config)

      all = env(Groups.all)
      FileUtils.mkdir_p(all.app_config_dir)
      all.send(:write_files)
      refute File.exist?(File.join(all.app_config_dir, "config"))
    end
  end
end
