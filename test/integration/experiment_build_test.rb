# frozen_string_literal: true

require "test_helper"
require "fileutils"

# `build:` entries of an experiment's rubies: parsed into recipes (paths
# relative to the file), refused when unusable (naming the key), named by
# other entries, and part of the fingerprint by their recipe's key.
describe "rubies built from source in an experiment file" do
  SOURCE_TREE = File.expand_path("../fixtures/ruby_source", __dir__)

  before do
    @dir = Dir.mktmpdir("rackbench-exp-build")
    FileUtils.cp_r(SOURCE_TREE, File.join(@dir, "src"))
    FileUtils.cp(File.expand_path("../fixtures/patches/count-from-one.patch", __dir__), File.join(@dir, "one.patch"))
  end

  after { FileUtils.rm_rf(@dir) }

  def parse(rubies)
    text = "name: b\nrubies:\n#{rubies.map { |r| "  - #{r}" }.join("\n")}\nservers: [puma]\napps: [rack-hello]\n"
    Rackbench::Experiment.parse(text, source: "b.yml", base_dir: @dir)
  end

  it "reads a build with patches, configure arguments and variables, paths relative to the file" do
    experiment = parse(['{ name: "3.9", build: { source: src, patches: [one.patch], configure: --with-x, env: { CFLAGS: -O3 } } }',
                        '{ name: 3.9-yjit, ruby: "3.9", options: [--yjit] }'])

    built, variant = experiment.rubies
    recipe = built.build
    assert_equal ["3.9", "3.9"], [built.label, built.ruby]
    assert_equal [File.join(@dir, "src"), [File.join(@dir, "one.patch")], ["--with-x"], { "CFLAGS" => "-O3" }],
                 [recipe.source.path, recipe.patches, recipe.configure, recipe.env]
    assert_nil variant.build
    assert_equal "3.9", variant.ruby
    specs = experiment.ruby_specs
    assert_same recipe, specs.first[:build]
    refute specs.last.key?(:build)
  end

  it "refuses a build it cannot use, naming the key" do
    {
      '{ name: x, build: { patches: [one.patch] } }' => "b.yml: rubies[0].build.source: required",
      '{ name: x, build: { source: nowhere.tar.xz } }' => "b.yml: rubies[0].build: source #{@dir}/nowhere.tar.xz: no such file or directory",
      '{ name: x, build: { source: src, patches: [two.patch] } }' => "b.yml: rubies[0].build: patch #{@dir}/two.patch: no such file",
      '{ name: x, build: { source: src, configure: [--prefix=/opt] } }' => "b.yml: rubies[0].build: configure argument --prefix=/opt is rackbench's: the build is installed into its cache",
      '{ name: x, ruby: ruby, build: { source: src } }' => "b.yml: rubies[0].ruby: give either ruby (an installed ruby) or build (one built from source), not both",
      '{ name: x, build: { source: src, flags: -O3 } }' => "b.yml: rubies[0].build.flags: unknown key; allowed: source, ref, patches, configure, env"
    }.each do |entry, message|
      error = assert_raises(Rackbench::ConfigError) { parse([entry]) }
      assert_equal message, error.message
    end
  end

  it "keeps an experiment without a build its old fingerprint, and changes it with the recipe's content" do
    plain = parse(["ruby"]).fingerprint
    assert_equal plain, parse(["ruby"]).fingerprint

    first = parse(["ruby", "{ name: p, build: { source: src, patches: [one.patch] } }"]).fingerprint
    refute_equal plain, first
    File.write(File.join(@dir, "one.patch"), File.read(File.join(@dir, "one.patch")).sub("= 1;", "= 2;"))
    second = parse(["ruby", "{ name: p, build: { source: src, patches: [one.patch] } }"]).fingerprint
    refute_equal first, second, "the same file names another build: another experiment"
  end
end
