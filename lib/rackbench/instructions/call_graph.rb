# frozen_string_literal: true

module Rackbench
  module Instructions
    # The call graph of a window, summed over the server's processes
    # (CallgrindFile#calls): the record's "call_graph" field, beside the
    # costliest functions of the instructions document. Per function its
    # self cost (its own code), its inclusive cost (its code and every
    # callee's: what a Ruby method's C functions add up to), how many
    # times it was called and how much of its inclusive cost its callers'
    # calls explain ("called"); per edge, caller to callee, the calls and
    # what they cost. The report's function diffs (Report::FunctionDiff) and
    # call trees (Report::CallTree) read nothing else.
    #
    #   {"total" => 479_602_746, "unlisted_self_max" => 41_200,
    #    "functions" => [{"object", "name", "self", "inclusive", "calls", "called"(, "cycles")}, ...],
    #    "edges" => [[caller index, callee index, calls, inclusive], ...]}
    #
    # Recursion: callgrind names a function called while it is already on
    # the stack (directly, or through others: the VM's loop runs a block
    # that calls into the VM again) "fn'2". Its levels are one function
    # here, as in the instructions document. A function's inclusive cost
    # is its outermost level's (its own code and every call it made), which
    # holds every deeper level once; adding the levels' inclusive costs
    # would count a recursion as many times as it is deep. The edges are
    # the outermost level's calls too, so a caller's edges never add up to
    # more than its inclusive cost.
    class CallGraph
      # A function is listed when its self cost is at least this share of
      # the window's instructions (a function diff's rows) or its
      # inclusive cost at least INCLUSIVE_MIN_SHARE (a call tree's
      # nodes); a function not listed cost at most "unlisted_self_max".
      SELF_MIN_SHARE = 0.0001
      INCLUSIVE_MIN_SHARE = 0.001
      EDGE_MIN_SHARE = 0.0001
      # What one record keeps at most: some 100 kB of JSON per trial.
      MAX_FUNCTIONS = 500
      MAX_EDGES = 2000
      RECURSION = /'(\d+)\z/

      # [object's file name, function name] as the reports list it:
      # recursion levels merged, a JIT's code one entry (Collection's
      # function_key).
      def self.key(function)
        object = File.basename(function.object.to_s)
        name = function.name.sub(RECURSION, "")
        object == Collection::UNKNOWN_OBJECT && name.match?(Collection::ADDRESS) ? [object, Collection::JIT_CODE] : [object, name]
      end

      # The recursion level of +function+: 1 for the outermost.
      def self.level(function)
        (m = RECURSION.match(function.name)) ? m[1].to_i : 1
      end

      # files :: the CallgrindFiles counted in the window
      def initialize(files)
        @total = files.sum(&:total)
        @self = Hash.new(0)
        @inclusive = Hash.new(0)
        @calls_in = Hash.new(0)
        @called = Hash.new(0)
        @cycles = Hash.new(0)
        @edges = Hash.new { |hash, key| hash[key] = [0, 0] }
        @simulated = !files.empty? && files.all? { |file| Cycles.simulated?(file.events) }
        files.each { |file| add(file) }
      end

      # The document's fields: {"call_graph" => ...}.
      def fields
        { "call_graph" => to_h }
      end

      def to_h
        listed = listed_keys
        index = listed.each_with_index.to_h
        functions = listed.map do |key|
          entry = { "object" => key[0], "name" => key[1], "self" => @self[key], "inclusive" => @inclusive[key],
                    "calls" => @calls_in[key], "called" => [@called[key], @inclusive[key]].min }
          entry["cycles"] = @cycles[key] if @simulated
          entry
        end
        unlisted = @self.reject { |key, _| index.key?(key) }.values.max || 0
        { "total" => @total, "unlisted_self_max" => unlisted, "functions" => functions, "edges" => edges(index) }
      end

      private

      def add(file)
        ir = file.events.index("Ir") || 0
        levels = outermost_levels(file)
        file.self_costs.each do |function, costs|
          key = CallGraph.key(function)
          @self[key] += costs[ir]
          @cycles[key] += Cycles.of(file.events, costs).to_i if @simulated
          @inclusive[key] += costs[ir] if CallGraph.level(function) == levels[key]
        end
        file.calls.each { |(caller, callee), call| add_call(caller, callee, call, call.inclusive[ir], levels) }
      end

      def add_call(caller, callee, call, cost, levels)
        from = CallGraph.key(caller)
        to = CallGraph.key(callee)
        @calls_in[to] += call.count
        # What callers explain of a function's cost, from any level of
        # theirs (a function the VM's nested loop calls has its callers
        # there): the rest of its inclusive cost is a root of the tree.
        @called[to] += cost if from != to && CallGraph.level(callee) == levels[to]
        return unless CallGraph.level(caller) == levels[from]

        if from != to
          @inclusive[from] += cost
          edge = @edges[[from, to]]
          edge[0] += call.count
          edge[1] += cost
        elsif CallGraph.level(callee) > CallGraph.level(caller)
          # Its own deeper level: part of what the outermost costs. (Two
          # blocks of a JIT's code, one entry here, each count their own.)
          @inclusive[from] += cost
        end
      end

      # key => the lowest recursion level the file has of it.
      def outermost_levels(file)
        levels = {}
        functions = file.self_costs.keys + file.calls.keys.flat_map { |pair| pair }
        functions.each do |function|
          key = CallGraph.key(function)
          level = CallGraph.level(function)
          levels[key] = level if levels[key].nil? || level < levels[key]
        end
        levels
      end

      # The functions a report needs, the costliest by self cost first.
      def listed_keys
        by_self = @self.select { |_, cost| cost >= @total * SELF_MIN_SHARE }
                       .sort_by { |key, cost| [-cost, key] }.first(MAX_FUNCTIONS).map(&:first)
        by_inclusive = @inclusive.select { |_, cost| cost >= @total * INCLUSIVE_MIN_SHARE }
                                 .sort_by { |key, cost| [-cost, key] }.first(MAX_FUNCTIONS).map(&:first)
        (by_self | by_inclusive).sort_by { |key| [-@self[key], key] }
      end

      def edges(index)
        kept = @edges.select do |(from, to), (_, cost)|
          index.key?(from) && index.key?(to) && cost >= @total * EDGE_MIN_SHARE
        end
        kept.sort_by { |(from, to), (_, cost)| [-cost, from, to] }.first(MAX_EDGES).map do |(from, to), (count, cost)|
          [index[from], index[to], count, cost]
        end
      end
    end
  end
end
