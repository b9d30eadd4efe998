# The main process of a Passenger trial: Passenger Standalone's builtin
# engine, run in the foreground as a child of this process. Started by
# rackbench's launcher (bundle_env/launcher.rb) under the trial's ruby, as
#
#   <ruby> [options] -I <bundler> launcher.rb .../passenger/boot.rb WORK_DIR/passenger.json
#
# with the settings Servers::Passenger#command wrote into the JSON file.
#
# Why not `passenger start`: it always starts Passenger's watchdog with
# --daemonize (a fork and setsid), so the watchdog, its core and every app
# process would leave the server's process tree and group. The sampler
# would not see them, the identity check would find no app process to
# check, and a stop could leave them running. Here the watchdog runs as
# this process's child, in its process group; the core (a group of its
# own) and the app processes are its descendants.
#
# The app processes: Passenger execs the program given as --ruby with its
# loader script (rack-loader.rb, or rack-preloader.rb for smart spawning).
# That program is a shell script written here (WORK_DIR/passenger-ruby)
# that execs this very process's interpreter command (its ruby, the
# variant's options, Bundler's load path and rackbench's launcher, as the
# launcher kept them from /proc/self/cmdline before $0 overwrote it), so every app process runs the trial's ruby
# with its options and loads the identity and window agents through the
# launcher, as every other server's processes do.
#
# Passenger's log goes to stderr: the trial's server log.
#
# Runs under every benchmarked CRuby; it is a script, not a library file.
require "json"
require "etc"
require "fileutils"
require "tmpdir"
require_relative "watchdog_command"

settings_path = File.expand_path(ARGV.fetch(0) { abort "rackbench passenger boot: no settings file given" })
settings = JSON.parse(File.read(settings_path))
work_dir = File.dirname(settings_path)

require "phusion_passenger"
PhusionPassenger.locate_directories
PhusionPassenger.require_passenger_lib "constants"
agent = PhusionPassenger.find_support_binary(PhusionPassenger::AGENT_EXE)
unless agent
  abort "rackbench: Passenger #{PhusionPassenger::VERSION_STRING}'s agent is not compiled (looked in " \
        "#{PhusionPassenger.support_binaries_dir} and #{PhusionPassenger.user_support_binaries_dir}); " \
        "rackbench compiles it when it installs the bundle"
end

launcher = File.expand_path("../../bundle_env/launcher.rb", __dir__)
interpreter = RackbenchPassenger::WatchdogCommand.interpreter(
  $rackbench_launch_argv || [], launcher: launcher, exe: File.realpath("/proc/self/exe")
)
abort "rackbench passenger boot: not started through rackbench's launcher (#{launcher})" unless interpreter

app_ruby = File.join(work_dir, "passenger-ruby")
File.write(app_ruby, RackbenchPassenger::WatchdogCommand.app_ruby_script(
                       interpreter, app_process: File.expand_path("app_process.rb", __dir__)
                     ))
File.chmod(0o755, app_ruby)
# Passenger's instance directory holds its Unix sockets, whose paths the
# kernel limits to 107 bytes: a short directory of its own under /tmp (as
# Passenger's default is), not the trial's directory, removed when the
# watchdog has exited.
instances_dir = Dir.mktmpdir("rackbench-passenger-")
group = begin
  Etc.getgrgid(Process.gid).name
rescue ArgumentError
  nil # no group database entry
end

argv = RackbenchPassenger::WatchdogCommand.argv(
  settings: settings, agent: agent, passenger_root: PhusionPassenger.install_spec, app_ruby: app_ruby,
  instances_dir: instances_dir, report_file: File.join(work_dir, "passenger-report.json"),
  user: Etc.getpwuid(Process.uid).name, group: group
)
$stderr.puts "# rackbench passenger: #{argv.join(" ")}"

# The measured window's pipes (agent/window.rb) cannot reach the app
# processes: Passenger closes every inherited descriptor when it spawns
# them, and the numbers may then be reused by descriptors of Passenger's
# own, which a watcher must never read. Without the variable their
# watchers poll for the window's files; this process keeps its pipes.
env = { "RACKBENCH_WINDOW_FDS" => nil }
watchdog = Process.spawn(env, *argv, in: File::NULL)
# A TERM or INT to this process alone (the guard's parent-death signal)
# reaches the watchdog, which stops the core and the app processes.
%w[TERM INT].each do |signal|
  Signal.trap(signal) do
    Process.kill(signal, watchdog)
  rescue Errno::ESRCH
    nil
  end
end
_, status = Process.wait2(watchdog)
FileUtils.rm_rf(instances_dir)
exit(status.exitstatus || 1)
