# frozen_string_literal: true

require "test_helper"

# The RUBY_GC_* variables of an experiment checked against each ruby before
# any trial (Trial::Http::GcSettingsCheck), over a fake `ruby -w` whose
# output is the lines CRuby prints for the variables it reads.
# test/integration/memory_variants_test.rb runs it on real rubies.
describe Rackbench::Trial::Http::GcSettingsCheck do
  GC_CHECK_RESULT = Struct.new(:output, :exit_ok, :timed_out) do
    def success? = exit_ok
  end

  def install(name, engine: "ruby")
    Rackbench::Rubies::Install.new(name: name, path: "/rubies/#{name}/bin/ruby", source: :path, engine: engine,
                                   version: "3.4.5", ruby_version: "3.4.5", abi_version: "3.4.0",
                                   description: "#{engine} 3.4.5", jit: [])
  end

  def experiment(rubies, extra = "")
    Rackbench::Experiment.parse(<<~YAML, source: "gc.yml", known_servers: %w[puma unicorn], known_apps: nil)
      name: gc
      rubies: #{rubies}
      servers: [puma, unicorn]
      apps: [rack-hello]
      #{extra}
    YAML
  end

  # A ruby that reads the variables named in +reads+ (CRuby's -w line for
  # each one set), and records how it was run.
  def fake_ruby(reads: [], ok: true)
    @calls = []
    lambda do |argv, env:, timeout_s:, chdir:|
      @calls << { argv: argv, env: env, timeout_s: timeout_s, chdir: chdir }
      lines = env.select { |name, _| reads.include?(name) }.map { |name, value| "#{name}=#{value} (default value: 1)\n" }
      GC_CHECK_RESULT.new(ok ? lines.join : "ruby: invalid option -w (-h will show valid options)\n", ok, false)
    end
  end

  def check(variants, run, parent_env: { "PATH" => "/usr/bin", "RUBY_GC_MALLOC_LIMIT" => "1",
                                         "RUBYOPT" => "-rbundler/setup", "BUNDLE_GEMFILE" => "/rackbench/Gemfile" })
    Rackbench::Trial::Http::GcSettingsCheck.new(variants: variants, parent_env: parent_env, run: run)
  end

  let(:r34) { install("r34") }

  it "passes the variables a ruby reads, asking it once per ruby and set of variables, without the shell's own" do
    variants = { "slots" => Rackbench::Rubies::Variant.new(install: r34, name: "slots",
                                                           env: { "RUBY_GC_HEAP_0_INIT_SLOTS" => "600000" }),
                 "r34" => Rackbench::Rubies::Variant.new(install: r34, name: "r34") }
    exp = experiment("[r34, { name: slots, ruby: r34, env: { RUBY_GC_HEAP_0_INIT_SLOTS: 600000 } }]")
    run = fake_ruby(reads: %w[RUBY_GC_HEAP_0_INIT_SLOTS])
    check(variants, run).check!(exp.configurations)
    assert_equal 1, @calls.size, "two servers, one ruby and one set of variables: one run; none for r34"
    call = @calls.first
    assert_equal ["/rubies/r34/bin/ruby", "-w", "--disable-gems", "-e", ""], call[:argv]
    assert_equal({ "PATH" => "/usr/bin", "RUBY_GC_HEAP_0_INIT_SLOTS" => "600000" }, call[:env],
                 "the shell's RUBY_GC_MALLOC_LIMIT is no trial's, nor rackbench's own bundle exec")
  end

  it "stops the run in one line naming the configuration, the variable and the ruby that does not read it" do
    variants = { "old-slots" => Rackbench::Rubies::Variant.new(install: r34, name: "old-slots") }
    exp = experiment("[{ name: old-slots, ruby: r34 }]",
                     "env: { RUBY_GC_HEAP_INIT_SLOTS: 600000, RUBY_GC_MALLOC_LIMIT: 32000000 }")
    error = assert_raises(Rackbench::SetupError) do
      check(variants, fake_ruby(reads: %w[RUBY_GC_MALLOC_LIMIT])).check!(exp.configurations)
    end
    assert_equal "ruby=old-slots server=puma app=rack-hello processes=1 threads=1: RUBY_GC_HEAP_INIT_SLOTS=600000: " \
                 "ruby 'old-slots' does not read this variable (ruby -w names every GC variable it reads); " \
                 "nothing was run", error.message
  end

  it "takes the experiment's value over the variant's, as the server's environment does" do
    variants = { "v" => Rackbench::Rubies::Variant.new(install: r34, name: "v", env: { "RUBY_GC_HEAP_GROWTH_FACTOR" => "1.1" }) }
    exp = experiment("[{ name: v, ruby: r34 }]", "env: { RUBY_GC_HEAP_GROWTH_FACTOR: 1.5 }")
    check(variants, fake_ruby(reads: %w[RUBY_GC_HEAP_GROWTH_FACTOR])).check!(exp.configurations)
    assert_equal "1.5", @calls.first[:env]["RUBY_GC_HEAP_GROWTH_FACTOR"]
  end

  it "leaves JRuby alone, and names a ruby that does not start" do
    jruby = install("jruby", engine: "jruby")
    variants = { "jruby" => Rackbench::Rubies::Variant.new(install: jruby, name: "jruby",
                                                           env: { "RUBY_GC_HEAP_0_INIT_SLOTS" => "1" }) }
    check(variants, fake_ruby).check!(experiment("[jruby]").configurations)
    assert_empty @calls

    variants = { "v" => Rackbench::Rubies::Variant.new(install: r34, name: "v", env: { "RUBY_GC_HEAP_0_INIT_SLOTS" => "1" }) }
    error = assert_raises(Rackbench::SetupError) { check(variants, fake_ruby(ok: false)).check!(experiment("[v]").configurations) }
    assert_equal "ruby 'v' (/rubies/r34/bin/ruby) did not start with RUBY_GC_HEAP_0_INIT_SLOTS=1: " \
                 "ruby: invalid option -w (-h will show valid options)", error.message
  end
end
