# frozen_string_literal: true

module Rackbench
  module Instructions
    # The instructions document's "gc": Ruby's GC inside one window, from
    # two sources. Its cycles (minor, major, compactions) are what the
    # agent read from GC.stat at both edges of every Ruby process; its
    # instructions are callgrind's (GcCost): the inclusive cost of every
    # call into the collector. When the ruby names none of the collector's
    # functions (a stripped libruby) and cycles ran, its instructions are
    # unknown (nil), and "named" says why; when no cycle ran, they are what
    # callgrind counted in the collector's functions, 0 but for a GC.start
    # of the app's own.
    #
    #   {"cycles" => {"minor" => 7, "major" => 0, "compactions" => 0}, "instructions" => 6_912_384,
    #    "per_request" => 3_456.2, "named" => true, "major_by" => [], "processes" => [...]}
    class GcFigure
      # :readings :: GcEdges#readings (per Ruby process)
      # :files :: the CallgrindFiles counted in the window
      # :requests :: the window's responses
      # :entries :: a stripped ruby's collector functions (GcProbe#entries), or nil
      def initialize(readings:, files:, requests:, entries: nil)
        @readings = readings
        @cost = GcCost.new(files, entries: entries)
        @requests = requests
        @probed = !entries.nil?
      end

      def to_h
        cycles = self.cycles
        known = @cost.named? || (cycles && cycles.values.all? { |n| n.to_i.zero? })
        instructions = known ? @cost.instructions : nil
        { "cycles" => cycles, "instructions" => instructions,
          "per_request" => instructions && @requests.to_i.positive? ? instructions.fdiv(@requests) : nil,
          "named" => @cost.named?, "source" => source, "major_by" => @readings.filter_map { |r| r["major_by"] }.uniq.sort,
          "processes" => @readings }
      end

      # Where the collector's functions came from: "symbols" (their names),
      # "probe" (a stripped ruby's GcProbe), or nil (neither).
      def source
        return nil unless @cost.named?

        @probed ? "probe" : "symbols"
      end

      # The cycles summed over the processes; nil when a process's are
      # unknown (it wrote no counts at the end).
      def cycles
        return nil if @readings.empty? || @readings.any? { |r| r["missing"] }

        %w[minor major compactions].to_h { |kind| [kind, @readings.sum { |r| r[kind].to_i }] }
      end
    end
  end
end
