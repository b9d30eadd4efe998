# frozen_string_literal: true

module Rackbench
  class Report
    # A configuration's instructions per request as a tree of calls, from
    # its trials' call graphs (Instructions::CallGraph) summed over the
    # batches: the data of a flame graph of callgrind's counts (FlameDiff
    # sets two side by side).
    #
    # A call graph is not a tree: callgrind knows what each function cost
    # when called from each caller, not from each whole stack. The tree
    # shares a function's callees among its callers in proportion to what
    # each caller's calls cost (gprof's assumption): a node's children are
    # its function's edges, scaled by the node's share of the function's
    # inclusive cost. A function already on the path is not expanded again
    # (recursion), and nodes below MIN_SHARE of the total are left out, so
    # a node's own part (its width less its children's) holds its self
    # cost, its recursion and its small callees.
    #
    # The roots are what no caller explains: a function's inclusive cost
    # less the edges into it (the thread's start, and what was on the stack
    # when the window opened).
    class CallTree
      MIN_SHARE = 0.005
      MAX_NODES = 1500
      MAX_DEPTH = 48

      # Function key ([object, name]) => [self, inclusive] per request.
      attr_reader :functions, :total

      # docs :: the instructions documents of a side's batches, each with
      #         its "call_graph"
      def initialize(docs)
        requests = docs.sum { |doc| doc["requests"].to_i }
        @total = docs.sum { |doc| doc["instructions"].to_i }.fdiv([requests, 1].max)
        @functions = Hash.new { |hash, key| hash[key] = [0.0, 0.0] }
        @called = Hash.new(0.0)
        @edges = Hash.new { |hash, key| hash[key] = Hash.new(0.0) }
        docs.each { |doc| add(doc["call_graph"], requests.to_f) }
      end

      # Path (an Array of function keys, outermost first) => instructions
      # per request under it, for every node of the tree; the root is [].
      def paths
        @paths ||= build_paths
      end

      private

      def add(graph, requests)
        keys = graph["functions"].map { |f| [f["object"], f["name"]] }
        graph["functions"].each_with_index do |f, i|
          sums = @functions[keys[i]]
          sums[0] += f["self"].to_i / requests
          sums[1] += f["inclusive"].to_i / requests
          @called[keys[i]] += f["called"].to_i / requests if f.key?("called")
        end
        graph["edges"].each { |from, to, _, cost| @edges[keys[from]][keys[to]] += cost.to_i / requests }
      end

      def build_paths
        min = @total * MIN_SHARE
        out = { [] => @total }
        roots = @functions.map { |key, (_, inclusive)| [key, inclusive - explained(key)] }
                          .select { |_, value| value >= min }.sort_by { |key, value| [-value, key] }
        # What the call graph left out (edges below its threshold) can make
        # roots of functions that are not: they never add up to more than
        # the whole.
        sum = roots.sum(&:last)
        scale = sum > @total ? @total / sum : 1.0
        roots.each { |key, value| expand([key], value * scale, min, out) }
        out
      end

      # What callers explain of a function's cost: the graph's "called"
      # (every caller's calls, their deeper levels too), else, for a trial
      # stored before it, the edges into it.
      def explained(key)
        return @called[key] if @called.key?(key)

        @incoming ||= Hash.new(0.0).tap do |incoming|
          @edges.each_value { |callees| callees.each { |callee, cost| incoming[callee] += cost } }
        end
        @incoming[key]
      end

      def expand(path, value, min, out)
        return if out.size >= MAX_NODES

        out[path] = out.fetch(path, 0.0) + value
        return if path.size >= MAX_DEPTH

        key = path.last
        inclusive = @functions[key][1]
        return unless inclusive.positive?

        scale = value / inclusive
        @edges[key].sort_by { |callee, cost| [-cost, callee] }.each do |callee, cost|
          child = cost * scale
          break if child < min
          next if path.include?(callee)

          expand(path + [callee], child, min, out)
        end
      end
    end
  end
end
