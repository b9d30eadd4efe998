# frozen_string_literal: true

module Rackbench
  module Instructions
    # The instructions a window spent in Ruby's garbage collector, from
    # callgrind's call graph (CallgrindFile#calls): the inclusive cost of
    # every call into one of the collector's functions from a function
    # outside the collector, summed over the window's processes. The
    # allocation that found no free slot calls gc_start or gc_continue, a
    # malloc over its limit garbage_collect_with_gvl, GC.start
    # gc_start_internal: each such call's inclusive cost is the collection
    # it ran (marking, sweeping, compaction), whatever the collector called
    # inside it.
    #
    # A call from one of the collector's functions to another is inside a
    # collection already counted; the collector's own steps (marking a
    # child, freeing an object) call none of its entries.
    #
    # The collector's functions are found by name (ENTRIES: every build of
    # rackbench's, ruby-build's, Debian's with its -dbgsym package), or, for
    # a libruby that names them by address only, from the ruby's GcProbe
    # (+entries+). Neither: a window in which the GC ran has no GC figure
    # (#named? false). The cost is never estimated from anything else.
    #
    # A finalizer is the application's code run after an object was
    # collected (gc_finalize_deferred): it counts outside the GC.
    class GcCost
      # The collector's functions in Ruby 3.1 to 3.4 (gc.c, gc/default.c):
      # its entry points and the steps they call, so that an entry point
      # the compiler inlined into its caller (heap_prepare into
      # newobj_slowpath, garbage_collect into garbage_collect_with_gvl) is
      # still found through the next function down. The write barrier's
      # incremental path (gc_writebarrier_incremental) runs only while a
      # major GC marks step by step: the collector's work too.
      ENTRIES = %w[
        garbage_collect garbage_collect_with_gvl gc_with_gvl gc_start gc_start_internal gc_rest gc_continue
        gc_marks gc_marks_start gc_marks_rest gc_marks_continue gc_marks_finish gc_marks_step
        gc_sweep gc_sweep_start gc_sweep_rest gc_sweep_continue gc_sweep_step gc_sweep_finish
        gc_compact gc_compact_start gc_compact_finish rb_gc_impl_start gc_writebarrier_incremental
      ].freeze
      ENTRY_SET = ENTRIES.to_h { |name| [name, true] }.freeze
      # What a compiler and callgrind add to a function's name: GCC's
      # clones ("gc_rest.part.0", "gc_start.cold", "gc_sweep.isra.0",
      # "gc_marks.constprop.0") and callgrind's recursion level ("'2").
      DECORATION = /(?:\.(?:part|cold|isra|constprop|lto_priv)(?:\.\d+)?)*(?:'\d+)?\z/

      # The collector's function +name+ stands for, or nil.
      def self.entry(name)
        base = name.to_s.sub(DECORATION, "")
        ENTRY_SET.key?(base) ? base : nil
      end

      # Whether +name+ is one of the collector's functions by name.
      def self.gc?(name)
        !entry(name).nil?
      end

      attr_reader :instructions

      # files :: the CallgrindFiles counted in the window
      # entries :: [object's file name, function name] pairs of a stripped
      #            ruby's collector (GcProbe#entries), or nil
      def initialize(files, entries: nil)
        @entries = entries&.to_h { |object, name| [[object, name], true] }
        @instructions = 0
        @named = false
        files.each { |file| add(file) }
        freeze
      end

      # Whether a function of the collector appeared in any dump: false for
      # a window of a stripped ruby without its probe's entries (or one in
      # which no collection ran).
      def named?
        @named
      end

      private

      def collector?(function)
        return true if self.class.gc?(function.name)
        return false unless @entries

        @entries.key?([File.basename(function.object.to_s), function.name.to_s.sub(/'\d+\z/, "")])
      end

      # A call's inclusive cost is one figure per event of the file: "Ir"
      # is the instructions (first, but not alone with --cache-sim=yes).
      def add(file)
        ir = file.events.index("Ir") || 0
        file.calls.each do |(caller, callee), call|
          next unless collector?(callee)

          @named = true
          @instructions += call.inclusive[ir].to_i unless collector?(caller)
        end
        @named ||= file.functions.each_key.any? { |function| collector?(function) }
      end
    end
  end
end
