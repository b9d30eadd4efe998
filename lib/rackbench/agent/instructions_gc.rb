# The instructions agent: Ruby's GC at the edges of an instructions
# trial's window. Loaded by rackbench's launcher after agent/window.rb when
# the trial counts instructions (RACKBENCH_INSTRUCTIONS_GC=1); registers
# with the window channel (RackbenchWindow) and, in every server process:
#
# - at the window's start, before the runner switches callgrind's
#   instrumentation on, runs a full GC with an immediate sweep
#   (GC.start(full_mark: true, immediate_sweep: true)), reads GC.stat and
#   writes $RACKBENCH_TRIAL_DIR/inside/<pid>.gc_start.json: the runner
#   waits for it in every process before it counts anything;
# - at the window's end, after the runner switched the instrumentation off
#   and had the counts written, reads GC.stat again and writes
#   $RACKBENCH_TRIAL_DIR/inside/<pid>.gc_end.json.
#
# Why (doc/methodology.md, "What falls into a window"): what a window
# counts includes the GC cycles that fall into it, and a major GC of
# rack-hello on Ruby 3.1 costs 43 million instructions, 21,000 per request
# of a 2,000-request window: whether one fell in a window or not split an
# A/A's batches into two clusters 10% apart. After a full GC every process
# starts the window from the same heap: nothing left to sweep, the malloc
# and old-object counters that trigger a major GC reset. The GC cycles the
# window's own requests cause are real work and stay in the count; the
# runner reports them apart (their number from these files, their
# instructions from callgrind's call graph).
#
# Both edges run with the instrumentation off: the agent's GC and its own
# work count in no window. Between the edges its thread waits in the
# window channel's blocking read, as the other listeners' does.
#
# Runs inside the measured server under every benchmarked ruby: no gem is
# required, it parses on old rubies, and it never raises into the server.
require_relative "plain_json"
require_relative "whole_file"

module RackbenchInstructionsGc
  START_SUFFIX = ".gc_start.json".freeze
  END_SUFFIX = ".gc_end.json".freeze
  # GC.stat keys read at each edge (a ruby that lacks one gives null).
  KEYS = %i[count minor_gc_count major_gc_count compact_count total_allocated_objects total_freed_objects
            heap_live_slots heap_available_slots heap_allocated_pages old_objects malloc_increase_bytes
            oldmalloc_increase_bytes].freeze

  module_function

  # The full GC that makes every window start from the same heap. A ruby
  # without the keywords (before 2.1) takes the plain GC.start.
  def collect
    GC.start(full_mark: true, immediate_sweep: true)
  rescue ArgumentError
    GC.start
  end

  # KEYS => Integer or nil.
  def stat
    all = GC.stat
    result = {}
    KEYS.each { |key| result[key.to_s] = all[key].is_a?(Integer) ? all[key] : nil }
    result
  rescue StandardError
    {}
  end

  # What the last GC before the edge was (GC.latest_gc_info's major_by and
  # gc_by), for the report's note on a window whose cycles differ.
  def latest
    info = GC.respond_to?(:latest_gc_info) ? GC.latest_gc_info : {}
    { "major_by" => info[:major_by] && info[:major_by].to_s, "gc_by" => info[:gc_by] && info[:gc_by].to_s }
  rescue StandardError
    {}
  end

  def document(edge)
    { "pid" => Process.pid, "ppid" => Process.ppid, "edge" => edge, "gc" => stat, "latest" => latest,
      "role" => defined?(RackbenchWindow) ? RackbenchWindow.role : nil }
  end

  def write(path, data)
    RackbenchWholeFile.write(path, RackbenchPlainJson.generate(data), agent: "instructions gc")
  end

  # The window channel's listener: one per process, copied into a child
  # at fork. A child forked after its parent's start edge (a worker
  # replaced mid-window) counts from its birth and runs no GC of the edge:
  # it would run under the instrumentation, inside the window.
  class Listener
    def window_started(dir)
      forked_in_window = !@started_in.nil? && @started_in != Process.pid
      @started_in = Process.pid
      RackbenchInstructionsGc.collect unless forked_in_window
      document = RackbenchInstructionsGc.document("start")
      document["forked_in_window"] = true if forked_in_window
      RackbenchInstructionsGc.write(File.join(dir, "#{Process.pid}#{START_SUFFIX}"), document)
    end

    def window_ended(dir)
      RackbenchInstructionsGc.write(File.join(dir, "#{Process.pid}#{END_SUFFIX}"),
                                    RackbenchInstructionsGc.document("end"))
    end
  end
end

RackbenchWindow.listen(RackbenchInstructionsGc::Listener.new) if defined?(RackbenchWindow)
