# Runs a gem executable of the bundle in this very interpreter:
#
#   <ruby> [options] launcher.rb <executable> [arguments...]
#
# with BUNDLE_GEMFILE and BUNDLE_PATH set (Rackbench::BundleEnv#env). It does
# what `bundle exec` does, minus one thing: `bundle exec` loads the gem's
# stub in-process only when the stub's shebang is one it recognises, and
# execs it otherwise. Bundler writes stubs with "#!/usr/bin/env
# <ruby_install_name>", which for Debian's ruby is "ruby3.1": not
# recognised, so `ruby --yjit -S bundle exec puma` starts a fresh ruby3.1
# from PATH, without --yjit. Here the executable is always loaded, so the
# interpreter and options that started this script are the ones measured.
#
# This is a script, not a library file, and runs under every benchmarked
# ruby: keep it parseable by old ones (JRuby 9.x implements Ruby 2.5/2.6).
require "bundler"

# RUBYOPT=-rbundler/setup, RUBYLIB and PATH for any process the server
# execs (as `bundle exec` sets them).
Bundler::SharedHelpers.set_bundle_environment
require "bundler/setup"

# In a trial, every process of the server says what it really runs as
# (after bundler/setup, so the server gem's activated version is known).
load File.expand_path("../agent/identity.rb", __dir__) if ENV["RACKBENCH_TRIAL_DIR"]

# In a server's trial, the measured window reaches every process through
# the trial's directory (agent/window.rb), and the listeners the trial asks
# for register with it: the counting agent (agent/inside.rb) when
# RACKBENCH_INSIDE is "counting"; the profiler (agent/profile.rb) when
# RACKBENCH_PROFILE names one (a profiled trial); the instructions agent
# (agent/instructions_gc.rb: a full GC at the window's start) when
# RACKBENCH_INSTRUCTIONS_GC is "1" (an instructions trial).
if ENV["RACKBENCH_TRIAL_DIR"] && ENV["RACKBENCH_WINDOW"] == "1"
  load File.expand_path("../agent/window.rb", __dir__)
  load File.expand_path("../agent/inside.rb", __dir__) if ENV["RACKBENCH_INSIDE"] == "counting"
  load File.expand_path("../agent/profile.rb", __dir__) if ENV["RACKBENCH_PROFILE"]
  load File.expand_path("../agent/instructions_gc.rb", __dir__) if ENV["RACKBENCH_INSTRUCTIONS_GC"] == "1"
end

# JRuby 9.3 reads getsockopt(IPPROTO_TCP, TCP_INFO) into a 256-byte buffer,
# but Linux's struct tcp_info is 280 bytes since kernel 6.x: the call raises
# a Java ArrayIndexOutOfBoundsException that no Ruby rescue expects. Puma
# probes TCP_INFO to skip clients that already hung up, whenever its thread
# pool is busy; the first such probe breaks its request handling for good.
# Without the constant, servers take the path they take on platforms
# without TCP_INFO. Remove this once JRuby copies the whole struct.
if RUBY_ENGINE == "jruby"
  require "socket"
  [Socket, Socket::Constants].each do |holder|
    holder.send(:remove_const, :TCP_INFO) if holder.const_defined?(:TCP_INFO, false)
  end
end

executable = ARGV.shift
abort "rackbench launcher: no executable given" unless executable

# A path (a boot script a server adapter wrote) runs as is; a bare name is
# a gem executable of the bundle.
if executable.include?("/")
  abort "rackbench launcher: no such script #{executable}" unless File.file?(executable)
  path = executable
else
  spec = Gem.loaded_specs.values.find { |s| s.executables.include?(executable) }
  abort "rackbench launcher: no gem in the bundle (#{ENV["BUNDLE_GEMFILE"]}) provides '#{executable}'" unless spec

  path = spec.bin_file(executable)
end
# This process's command line as it started (the interpreter, its options,
# this launcher, the executable and its arguments), kept because setting
# $0 overwrites /proc/self/cmdline: a server that execs its app processes
# itself (Passenger's boot script) starts them with the same interpreter
# command.
$rackbench_launch_argv = begin
  File.binread("/proc/self/cmdline").split("\0")
rescue SystemCallError, IOError
  nil
end
$0 = path
load path
