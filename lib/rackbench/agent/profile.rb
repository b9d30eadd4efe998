# The profiler of a profiled trial, loaded by rackbench's launcher
# (bundle_env/launcher.rb) into every server process after agent/window.rb,
# when the runner sets RACKBENCH_PROFILE, e.g. "stackprof:cpu:1000"
# (tool, mode, interval: microseconds for cpu and wall, allocations for
# object).
#
# It listens to the measured window (RackbenchWindow.listen): at the
# window's start it starts StackProf (raw: true, so the merged profile
# keeps whole stacks), at its end it stops it and writes
#
#   $RACKBENCH_TRIAL_DIR/inside/<pid>.stackprof.dump
#
# (StackProf's own format, Marshal of StackProf.results, which the
# `stackprof` command reads too), whole by rename, so the runner never
# merges a half-written dump. Every server process does so, each on its
# own watcher thread.
#
# stackprof is in the server's bundle because the runner adds it to the
# generated Gemfile of every environment of a profiled experiment
# (Rackbench::Profile::Settings#gem_lines); it is required here, at load
# time, not under load at the window's start.
#
# Runs inside the measured server, under every benchmarked ruby: it parses
# on old rubies and never raises into the server; what fails is a warning
# on stderr, and the runner records the process's profile as missing.
require_relative "whole_file"

module RackbenchProfile
  ENV_VAR = "RACKBENCH_PROFILE".freeze
  MODES = %w[cpu wall object].freeze
  DUMP_SUFFIX = ".stackprof.dump".freeze

  # Starts StackProf for the window and dumps its results at the end.
  class Stackprof
    attr_reader :mode, :interval

    # mode :: "cpu", "wall" or "object"
    # interval :: microseconds between samples (cpu, wall) or allocations per sample (object)
    def initialize(mode, interval)
      @mode = mode.to_sym
      @interval = interval
      @started = false
    end

    def window_started(_dir)
      # A worker forked while its parent profiled inherits StackProf's
      # state but not its timer (POSIX: a child has no interval timers):
      # those samples are the parent's, so they are dropped.
      if StackProf.running?
        StackProf.stop
        StackProf.results
      end
      @started = StackProf.start(mode: @mode, interval: @interval, raw: true)
      warn "rackbench profile: StackProf did not start in process #{Process.pid}" unless @started
    end

    # Writes the dump; returns its path (nil when nothing was profiled).
    def window_ended(dir)
      return nil unless @started

      @started = false
      StackProf.stop
      results = StackProf.results
      return nil unless results

      path = File.join(dir, "#{Process.pid}#{DUMP_SUFFIX}")
      RackbenchWholeFile.write(path, Marshal.dump(results), agent: "profile", binary: true) ? path : nil
    end
  end

  module_function

  # The listener the variable's value asks for, or nil (with a warning)
  # when it names nothing this file knows. "stackprof:cpu:1000".
  def listener(value)
    tool, mode, interval = value.to_s.split(":")
    unless tool == "stackprof" && MODES.include?(mode) && interval.to_s =~ /\A[1-9][0-9]*\z/
      warn "rackbench profile: #{ENV_VAR}=#{value.inspect} is not tool:mode:interval (stackprof:cpu:1000)"
      return nil
    end

    require "stackprof"
    Stackprof.new(mode, interval.to_i)
  rescue LoadError, StandardError => e
    warn "rackbench profile: no profiler: #{e.class}: #{e.message}"
    nil
  end

  # Registers the listener with the window channel; returns it (nil when
  # there is no channel or no profiler).
  def install(value = ENV[ENV_VAR])
    return nil unless defined?(RackbenchWindow)

    profiler = listener(value)
    profiler && RackbenchWindow.listen(profiler)
  rescue StandardError => e
    warn "rackbench profile: not installed: #{e.class}: #{e.message}"
    nil
  end
end

RackbenchProfile.install
