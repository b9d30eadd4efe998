# The profiler of a profiled trial, loaded by rackbench's launcher
# (bundle_env/launcher.rb) into every server process after agent/window.rb,
# when the runner sets RACKBENCH_PROFILE, e.g. "stackprof:cpu:1000" or
# "vernier:wall:1000" (tool, mode, interval: microseconds for cpu and wall,
# allocations for object).
#
# It listens to the measured window (RackbenchWindow.listen): at the
# window's start it starts the profiler, at its end it stops it and writes
#
#   $RACKBENCH_TRIAL_DIR/inside/<pid>.stackprof.dump   (StackProf: Marshal of
#       StackProf.results with raw: true, which the `stackprof` command reads too)
#   $RACKBENCH_TRIAL_DIR/inside/<pid>.vernier.json     (Vernier: its samples as
#       frames and stacks with counts, rackbench's own JSON, see Vernier#dump)
#   $RACKBENCH_TRIAL_DIR/inside/<pid>.objspace.json    (objspace: allocations
#       by class, in the same shape, see agent/allocation_census.rb)
#
# whole by rename, so the runner never merges a half-written dump. Every
# server process does so, each on its own watcher thread.
#
# The profiler's gem is in the server's bundle because the runner adds it
# to the generated Gemfile of every environment of a profiled experiment
# (Rackbench::Profile::Settings#gem_lines); it is required here, at load
# time, not under load at the window's start.
#
# Runs inside the measured server, under every benchmarked ruby: it parses
# on old rubies and never raises into the server; what fails is a warning
# on stderr, and the runner records the process's profile as missing.
require_relative "whole_file"
require_relative "plain_json"
require_relative "allocation_census"

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
      @cpu_start_s = RackbenchProfile.cpu_s
    end

    # Writes the dump; returns its path (nil when nothing was profiled).
    def window_ended(dir)
      return nil unless @started

      @started = false
      StackProf.stop
      cpu_end_s = RackbenchProfile.cpu_s
      results = StackProf.results
      return nil unless results

      # What the samples stand for: cpu mode's timer (ITIMER_PROF) fires
      # at most once per kernel tick of CPU time (4 ms at 250 Hz), however
      # short the interval asked; the runner weighs each sample by the
      # CPU time measured over the window instead (Profile::Merged).
      results[:rackbench_cpu_us] = ((cpu_end_s - @cpu_start_s) * 1e6).round if cpu_end_s && @cpu_start_s

      path = File.join(dir, "#{Process.pid}#{DUMP_SUFFIX}")
      RackbenchWholeFile.write(path, Marshal.dump(results), agent: "profile", binary: true) ? path : nil
    end
  end

  # Runs Vernier (Ruby 3.2.1+) for the window: its time collector samples
  # every thread every interval, and tells a running thread (category 0)
  # from one idle or waiting for the GVL (1, 2). cpu mode keeps the running
  # samples only, wall mode all of them; object mode samples every
  # interval-th allocation (Vernier's allocation_interval).
  class Vernier
    VERNIER_DUMP_SUFFIX = ".vernier.json".freeze
    RUNNING = 0
    # In object mode, time samples are not what is kept: as rare as
    # Vernier allows.
    OBJECT_MODE_INTERVAL_US = 1_000_000

    attr_reader :mode, :interval

    def initialize(mode, interval)
      @mode = mode
      @interval = interval
      @collector = nil
    end

    def window_started(_dir)
      options = if @mode == "object"
                  { interval: OBJECT_MODE_INTERVAL_US, allocation_interval: @interval }
                else
                  { interval: @interval }
                end
      @collector = ::Vernier::Collector.new(:wall, options)
      @collector.start
    end

    # Writes the dump; returns its path (nil when nothing was profiled).
    def window_ended(dir)
      return nil unless @collector

      result = @collector.stop
      @collector = nil
      path = File.join(dir, "#{Process.pid}#{VERNIER_DUMP_SUFFIX}")
      RackbenchWholeFile.write(path, RackbenchPlainJson.generate(dump(result)), agent: "profile") ? path : nil
    end

    # { "tool", "mode", "interval", "frames" => [[name, file, line]],
    #   "stacks" => [[[frame index, outermost first], samples]] }: the
    # shape of Rackbench::Profile::Merged, so the runner reads it as a
    # StackProf dump is read.
    def dump(result)
      table = result.stack_table
      frames = []
      frame_ids = {}
      stacks = Hash.new(0)
      each_sample(result) do |stack_idx, weight|
        ids = table.full_stack(stack_idx).reverse.map do |idx|
          frame = table.stack_frame_idx(idx)
          func = table.frame_func_idx(frame)
          # A frame is a method, as StackProf's are (its first line), not
          # the line each sample was at, which would split one method's
          # samples over its lines.
          line = table.respond_to?(:func_first_lineno) ? table.func_first_lineno(func) : table.frame_line_no(frame)
          key = [table.func_name(func).to_s, table.func_filename(func).to_s, line]
          frame_ids[key] ||= (frames << key).size - 1
        end
        stacks[ids] += weight
      end
      { "tool" => "vernier", "mode" => @mode, "interval" => @interval, "frames" => frames,
        "stacks" => stacks.map { |ids, count| [ids, count] } }
    end

    def each_sample(result)
      result.threads.each_value do |thread|
        if @mode == "object"
          allocations = thread[:allocations] || {}
          Array(allocations[:samples]).zip(Array(allocations[:weights])) { |stack, weight| yield stack, weight || 1 }
        else
          categories = thread[:sample_categories] || []
          thread[:samples].each_with_index do |stack, i|
            next if @mode == "cpu" && (categories[i] || RUNNING) != RUNNING

            yield stack, (thread[:weights] || [])[i] || 1
          end
        end
      end
    end
  end

  TOOLS = { "stackprof" => ["stackprof", Stackprof], "vernier" => ["vernier", Vernier],
            "objspace" => ["objspace", AllocationCensus] }.freeze

  module_function

  # This process's CPU time (every thread's) in seconds, nil where the
  # clock is missing.
  def cpu_s
    Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
  rescue StandardError
    nil
  end

  # The listener the variable's value asks for, or nil (with a warning)
  # when it names nothing this file knows. "stackprof:cpu:1000".
  def listener(value)
    tool, mode, interval = value.to_s.split(":")
    unless TOOLS.key?(tool) && MODES.include?(mode) && interval.to_s =~ /\A[1-9][0-9]*\z/
      warn "rackbench profile: #{ENV_VAR}=#{value.inspect} is not tool:mode:interval (stackprof:cpu:1000)"
      return nil
    end

    library, profiler = TOOLS.fetch(tool)
    require library
    profiler.new(mode, interval.to_i)
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
