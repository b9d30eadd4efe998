# Describes the ruby running it, for Rackbench::Rubies::Prober: prints one
# line, "RACKBENCH_PROBE " followed by a JSON object. The marker lets the
# prober find that line among warnings the interpreter may print.
#
# This is a script, not a library file: rackbench runs
# `<ruby> probe_script.rb <ruby>` (the second argument being the command it
# ran, for the YJIT check) under every candidate ruby, so it must parse on
# old ones too (JRuby 9.x implements Ruby 2.5/2.6): no Ruby 3 syntax, no
# frozen-string assumptions. Loading it without running it as the program
# (the unit tests do) defines RackbenchProbe and prints nothing.
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
  # YJIT cannot run, so a child started with --yjit has to confirm it. The
  # child is the command rackbench ran (ARGV[0]), else this process's own
  # executable: never RbConfig.ruby, which is where the ruby was built to
  # be installed and, for a relocated build, another ruby.
  def self.jit_available?(jit)
    return false unless defined?(RubyVM) && RubyVM.const_defined?(jit.upcase)
    return true unless jit == "yjit"

    system(ARGV.first || exe, "--yjit", "-e", "exit(RubyVM::YJIT.enabled? ? 0 : 1)",
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

  # RbConfig.ruby, real path: the interpreter this ruby says it is. For
  # CRuby that is a path fixed at build time (a relocated or copied binary
  # still reports it); JRuby and TruffleRuby compute it from their home.
  def self.executable
    File.realpath(RbConfig.ruby)
  rescue SystemCallError
    RbConfig.ruby
  end

  # What the kernel runs in this process: the real path of /proc/self/exe
  # (for a wrapper script, the interpreter it exec'd; for JRuby, the JVM).
  # Where /proc is missing, RbConfig.ruby stands in.
  def self.exe
    File.realpath("/proc/self/exe")
  rescue SystemCallError, NotImplementedError
    executable
  end

  # Shared libraries with this name are a CRuby's libruby.so or
  # libruby-3.1.so.3.1.7 (Debian); libtruffleruby does not match.
  LIBRUBY = /\Alibruby(-[0-9.]+)?\.so(\.|\z)/

  # The real path of the libruby shared object mapped into this process,
  # from the text of /proc/self/maps (its sixth column is the file), or nil
  # when none is mapped: a static build, JRuby, or no /proc.
  def self.libruby(maps = read_maps)
    maps.each_line do |line|
      file = line.split(" ", 6)[5].to_s.strip.sub(/ \(deleted\)\z/, "")
      next unless file.start_with?("/") && File.basename(file) =~ LIBRUBY

      begin
        return File.realpath(file)
      rescue SystemCallError
        return file
      end
    end
    nil
  end

  def self.read_maps
    File.read("/proc/self/maps")
  rescue SystemCallError, NotImplementedError
    ""
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
      "exe" => exe,
      "libruby" => libruby,
      "jit" => jits,
      "bundler_version" => bundler_version,
      "bundler_bin" => bundler_bin
    }
  end
end

$stdout.puts("RACKBENCH_PROBE " + JSON.generate(RackbenchProbe.describe)) if $PROGRAM_NAME == __FILE__
