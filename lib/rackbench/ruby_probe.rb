# Describes the ruby running it, for Rackbench::Rubies::Prober: prints one
# line, "RACKBENCH_PROBE " followed by a JSON object. The marker lets the
# prober find that line among warnings the interpreter may print.
#
# This is a script, not a library file: rackbench runs `<ruby> ruby_probe.rb`
# under every candidate ruby, so it must parse on old ones too (JRuby 9.x
# implements Ruby 2.5/2.6): no Ruby 3 syntax, no frozen-string assumptions.
require "rbconfig"
require "json"

module RackbenchProbe
  def self.engine
    defined?(RUBY_ENGINE) ? RUBY_ENGINE : "ruby"
  end

  def self.jits
    return ["jvm"] if engine == "jruby"
    return ["graal"] if engine == "truffleruby"

    %w[yjit mjit rjit].select { |jit| jit_available?(jit) }
  end

  # MJIT and RJIT are trusted from their constant. YJIT is the one that
  # variants compare against, and Ruby 3.1 defines RubyVM::YJIT even where
  # YJIT cannot run, so a child started with --yjit has to confirm it.
  def self.jit_available?(jit)
    return false unless defined?(RubyVM) && RubyVM.const_defined?(jit.upcase)
    return true unless jit == "yjit"

    system(RbConfig.ruby, "--yjit", "-e", "exit(RubyVM::YJIT.enabled? ? 0 : 1)",
           :in => File::NULL, :out => File::NULL, :err => File::NULL) ? true : false
  end

  # The newest Bundler of this ruby whose `bundle` script exists. The
  # script is run directly later (`<ruby> <script>`), not through
  # `<ruby> -S bundle`: -S searches PATH, and Debian's JRuby ships a broken
  # bin/bundle.
  def self.bundler
    specs = Gem::Specification.find_all_by_name("bundler").sort_by(&:version).reverse
    spec = specs.find { |s| File.file?(s.bin_file("bundle")) }
    spec ? [spec.version.to_s, spec.bin_file("bundle")] : [nil, nil]
  rescue StandardError, LoadError
    [nil, nil]
  end

  def self.executable
    File.realpath(RbConfig.ruby)
  rescue SystemCallError
    RbConfig.ruby
  end

  def self.describe
    bundler_version, bundler_bin = bundler
    {
      "engine" => engine,
      "version" => defined?(RUBY_ENGINE_VERSION) ? RUBY_ENGINE_VERSION : RUBY_VERSION,
      "ruby_version" => RUBY_VERSION,
      "abi_version" => RbConfig::CONFIG["ruby_version"],
      "description" => RUBY_DESCRIPTION,
      "platform" => RUBY_PLATFORM,
      "executable" => executable,
      "jit" => jits,
      "bundler_version" => bundler_version,
      "bundler_bin" => bundler_bin
    }
  end
end

$stdout.puts("RACKBENCH_PROBE " + JSON.generate(RackbenchProbe.describe))
