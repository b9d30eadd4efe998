# frozen_string_literal: true

module Rackbench
  module Instructions
    # Cycles estimated from callgrind's cache simulation (`--cache-sim=yes`),
    # by the model CodSpeed's CPU simulation and iai-callgrind use: every
    # access served by the first-level caches costs 1 cycle, one served by
    # the last level 5, one that goes to memory 35.
    #
    #   L1 hits  = Ir + Dr + Dw - (I1mr + D1mr + D1mw)
    #   LL hits  = (I1mr + D1mr + D1mw) - (ILmr + DLmr + DLmw)
    #   RAM hits = ILmr + DLmr + DLmw
    #   cycles   = L1 hits + 5 LL hits + 35 RAM hits
    #
    # An estimate, not a measurement: the simulated caches are private to
    # one process and never shared with the other processes of the server
    # or the machine, no branch is mispredicted, no instruction waits on
    # another, and the weights are a typical machine's (doc/methodology.md).
    # What it adds to a count of instructions is memory traffic: a change
    # that moves where data lies (an allocator, GC.compact, a heap's size)
    # moves the misses even when it runs the same instructions.
    module Cycles
      # The events the model reads; a dump without them was not simulated.
      EVENTS = %w[Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw].freeze
      LL_HIT_CYCLES = 5
      RAM_CYCLES = 35
      MODEL = "L1 hits + #{LL_HIT_CYCLES} LL hits + #{RAM_CYCLES} RAM hits".freeze

      module_function

      # Whether +events+ (a file's event names) come from a cache simulation.
      def simulated?(events)
        (EVENTS - events).empty?
      end

      # {"l1_hits", "ll_hits", "ram_hits", "cycles"} of +totals+ ({"Ir" =>
      # ..., "Dr" => ...}, the model's events), or nil when one is missing.
      def estimate(totals)
        return nil unless simulated?(totals.keys)

        t = totals.transform_values(&:to_i)
        l1_misses = t["I1mr"] + t["D1mr"] + t["D1mw"]
        ram = t["ILmr"] + t["DLmr"] + t["DLmw"]
        l1_hits = t["Ir"] + t["Dr"] + t["Dw"] - l1_misses
        ll_hits = l1_misses - ram
        { "l1_hits" => l1_hits, "ll_hits" => ll_hits, "ram_hits" => ram,
          "cycles" => l1_hits + (LL_HIT_CYCLES * ll_hits) + (RAM_CYCLES * ram) }
      end

      # The document's "cache_sim" field for the window's +files+
      # (CallgrindFiles) and +requests+: {"cache_sim" => {"events" =>
      # {name => total}, "l1_hits", "ll_hits", "ram_hits", "cycles",
      # "per_request", "model"}}; {} when the files were not simulated.
      def fields(files, requests)
        return {} if files.empty? || !files.all? { |file| simulated?(file.events) }

        totals = Hash.new(0)
        files.each { |file| file.event_totals.each { |name, count| totals[name] += count } }
        estimate = estimate(totals)
        per_request = requests.to_i.positive? ? estimate["cycles"].fdiv(requests) : nil
        { "cache_sim" => { "events" => totals.slice(*EVENTS), "model" => MODEL, "per_request" => per_request }
          .merge(estimate) }
      end

      # The estimated cycles of one cost vector (+costs+ in +events+'
      # order), or nil without a simulation.
      def of(events, costs)
        estimate(events.each_with_index.to_h { |name, i| [name, costs[i]] })&.fetch("cycles")
      end
    end
  end
end
