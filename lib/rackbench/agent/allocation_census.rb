# Allocations by class, counted inside a server process over part of the
# measured window: the `objspace` profile tool (agent/profile.rb,
# RACKBENCH_PROFILE=objspace:object:1).
#
# Neither StackProf nor Vernier says which class an allocated object was
# of (their object mode samples where, not what), and Ruby has no public
# hook that does so without C. What Ruby has is objspace's allocation
# tracing, which tags every object allocated while it is on. So at the
# window's start the census:
#
#   1. turns the GC off, so that no object allocated from then on is freed
#      before it is counted (the census then sees every allocation, not
#      only the survivors);
#   2. clears and starts objspace's allocation tracing;
#   3. lets the server serve until SPAN_OBJECTS allocations were made (a
#      thread of its own polls GC.stat every POLL_S) or the window ended;
#   4. stops tracing, turns the GC back on (unless it was off before), and
#      walks the heap once, counting the traced objects by class.
#
# Objects that ObjectSpace.each_object never yields (internal ones: the
# VM's imemo, hidden strings and arrays) are the span's allocations
# (GC.stat's total_allocated_objects) less those counted by class: one
# row, INTERNAL_NAME, so the rows add up to every allocation of the span.
#
# The span is a sample of the window: at the window's end its counts are
# scaled by the window's allocations over the span's, so that they add up
# to the window's allocations and a report's "objects per request" is
# allocations per request by class. The span is SPAN_OBJECTS long (at most
# about 40 MB of heap and tracing table held at once); the GC being off
# and the tracing slow that part of the window down, which is why only a
# profiled trial, never a measured one, runs it.
#
# Written as inside/<pid>.objspace.json in the shape agent/profile.rb's
# Vernier dump has (frames and stacks), one frame per class:
#
#   { "tool" => "objspace", "mode" => "object", "interval" => 1,
#     "frames" => [[class name, "(allocated class)", 0], ...],
#     "stacks" => [[[frame index], objects], ...],
#     "span" => { "objects", "counted", "scale" } }
#
# Runs inside the measured server, under every benchmarked ruby: it parses
# on old rubies and never raises into the server.
require_relative "whole_file"
require_relative "plain_json"

module RackbenchProfile
  class AllocationCensus
    DUMP_SUFFIX = ".objspace.json".freeze
    FILE_LABEL = "(allocated class)".freeze
    INTERNAL_NAME = "(internal objects: imemo, hidden)".freeze
    ANONYMOUS_NAME = "(anonymous class)".freeze
    # Allocations a span counts: enough for hundreds of a Rails page's
    # requests, little enough to hold uncollected.
    SPAN_OBJECTS = 400_000
    POLL_S = 0.002

    attr_reader :mode, :interval

    def initialize(mode, interval, span_objects: SPAN_OBJECTS)
      @mode = mode
      @interval = interval
      @span_objects = span_objects
      @lock = Mutex.new
      @span = nil
      @counts = nil
    end

    def window_started(_dir)
      # A process forked while its parent counted inherits the GC turned
      # off and the tracing on, without the thread that would end them.
      if @span
        @lock = Mutex.new
        finish_span(inherited: true)
      end
      @counts = nil
      @window_start = nil
      start_span
    end

    # Writes the dump; returns its path (nil when nothing was counted).
    def window_ended(dir)
      window_end = RackbenchProfile::AllocationCensus.allocated
      # A span still open ends with the window: then it is the window.
      whole_window = finish_span
      counts = @counts
      return nil unless counts && @window_start && window_end

      path = File.join(dir, "#{Process.pid}#{DUMP_SUFFIX}")
      data = dump(counts, whole_window ? counts["objects"] : window_end - @window_start)
      RackbenchWholeFile.write(path, RackbenchPlainJson.generate(data), agent: "profile") ? path : nil
    end

    # The dump of a span's counts ({ "objects", "by_class" => { name =>
    # objects } }) scaled to the window's allocations (pure).
    def dump(counts, window_objects)
      span_objects = counts["objects"]
      scale = span_objects > 0 ? window_objects.fdiv(span_objects) : 0.0
      rows = counts["by_class"].to_a
      internal = span_objects - counts["by_class"].values.inject(0, :+)
      rows << [INTERNAL_NAME, internal] if internal > 0
      frames = []
      stacks = []
      rows.sort_by { |name, objects| [-objects, name] }.each do |name, objects|
        scaled = (objects * scale).round
        next if scaled <= 0

        stacks << [[frames.size], scaled]
        frames << [name, FILE_LABEL, 0]
      end
      { "tool" => "objspace", "mode" => "object", "interval" => 1, "frames" => frames, "stacks" => stacks,
        "span" => { "objects" => span_objects, "counted" => span_objects - [internal, 0].max,
                    "window_objects" => window_objects, "scale" => scale } }
    end

    def self.allocated
      GC.stat(:total_allocated_objects)
    rescue StandardError
      nil
    end

    # Each object traced in the span (objspace knows its generation) by the
    # name of its class.
    def self.count_traced
      class_of = Kernel.instance_method(:class)
      name_of = Module.instance_method(:name)
      by_class = Hash.new(0)
      ObjectSpace.each_object do |object|
        next if ObjectSpace.allocation_generation(object).nil?

        by_class[class_of.bind_call(object)] += 1
      end
      by_name = Hash.new(0)
      by_class.each do |klass, objects|
        name = name_of.bind_call(klass)
        by_name[name.is_a?(String) ? name : ANONYMOUS_NAME] += objects
      end
      by_name
    end

    private

    # The span starts, and the window with it, after the agent's own
    # allocations (its thread): the window's start is the span's.
    def start_span
      # GC.stat's first call in a process makes its key names: before
      # the tracing, not counted as the app's.
      RackbenchProfile::AllocationCensus.allocated
      @gc_was_disabled = GC.disable
      span = @span = {}
      span[:thread] = Thread.new { wait_for_span(span) }
      ObjectSpace.trace_object_allocations_clear
      ObjectSpace.trace_object_allocations_start
      span[:start] = @window_start = RackbenchProfile::AllocationCensus.allocated
    rescue StandardError => e
      warn "rackbench profile: the allocation census did not start in process #{Process.pid}: #{e.class}: #{e.message}"
      finish_span(inherited: true)
    end

    # The span's own thread: ends the span once it holds enough objects.
    def wait_for_span(span)
      Thread.current.name = "rackbench-census" if Thread.current.respond_to?(:name=)
      loop do
        break unless @span.equal?(span)

        start = span[:start]
        now = RackbenchProfile::AllocationCensus.allocated
        break if now.nil? || (start && now - start >= @span_objects)

        sleep POLL_S
      end
      finish_span(from_thread: true)
    rescue StandardError => e
      warn "rackbench profile: the allocation census failed in process #{Process.pid}: #{e.class}: #{e.message}"
    end

    # Ends the span once (from its thread or at the window's end): tracing
    # off, the count, then the GC as it was. inherited: a span a fork
    # left, dropped uncounted.
    # Returns whether it ended a span.
    def finish_span(from_thread: false, inherited: false)
      span = nil
      @lock.synchronize do
        span = @span
        @span = nil
        return false unless span

        ObjectSpace.trace_object_allocations_stop
        # Read after the tracing stopped: every object it tagged is in the
        # count, so the classes never add up to more than the span.
        finish = RackbenchProfile::AllocationCensus.allocated
        # Counted before the GC is back on: a collection now would free
        # the span's dead objects uncounted.
        unless inherited
          by_class = RackbenchProfile::AllocationCensus.count_traced
          @counts = { "objects" => finish - span[:start], "by_class" => by_class } if finish && span[:start]
        end
        ObjectSpace.trace_object_allocations_clear
        GC.enable unless @gc_was_disabled
      end
      thread = span[:thread]
      thread.join if thread && !from_thread && thread != Thread.current
      true
    end
  end
end
