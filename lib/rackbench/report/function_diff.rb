# frozen_string_literal: true

require_relative "diff_rows"

module Rackbench
  class Report
    # Where the instructions went: B's instructions per request against
    # A's, function by function (DiffRows: means over each side's
    # instructions trials, the difference with its interval across the
    # batches, its share of the whole difference, one side only), from
    # the self costs callgrind gave each function (its own code, callees
    # left out), with beside them the inclusive costs (its code and every
    # callee's: what a Ruby method's C functions add up to), the calls
    # per request, what one call costs more or less, and the estimated
    # cycles when both sides ran the cache simulation.
    #
    # A pure function of the two sides' instructions documents: the
    # "call_graph" field where a trial has one (Instructions::CallGraph),
    # else its costliest functions ("functions", self costs only).
    # doc/methodology.md says what it can and cannot tell.
    class FunctionDiff
      # Rows kept in the report document; the views show fewer (terminal
      # 10, HTML 30, gate's Markdown 5), CSV every kept one.
      ROWS_KEPT = 200

      # Per side: each batch's functions and figures, read once.
      Side = Struct.new(:self_costs, :inclusive, :calls, :cycles, :totals, :unlisted_max, :graph_docs,
                        keyword_init: true)

      # The diff of +b_trials+ against +a_trials+ (each a configuration's
      # ok instructions trials, TrialEntry or anything with #instructions),
      # or nil when a side has none.
      def self.of(a_trials, b_trials, options)
        a = a_trials.select { |t| t.instructions&.fetch("per_request", nil) }
        b = b_trials.select { |t| t.instructions&.fetch("per_request", nil) }
        a.empty? || b.empty? ? nil : new(a.map(&:instructions), b.map(&:instructions), options)
      end

      attr_reader :rows

      # a_docs, b_docs :: the instructions documents of each side's batches
      # options :: the Report::Options (confidence)
      def initialize(a_docs, b_docs, options)
        @a = side(a_docs)
        @b = side(b_docs)
        @diff = DiffRows.new(@a.self_costs, @b.self_costs, a_totals: @a.totals, b_totals: @b.totals,
                                                           confidence: options.confidence,
                                                           a_unlisted: @a.unlisted_max, b_unlisted: @b.unlisted_max)
        @rows = @diff.rows
      end

      # Whether every batch of both sides stored its call graph: inclusive
      # costs and calls, and a call tree (Report::CallTree).
      def call_graphs?
        !@a.graph_docs.nil? && !@b.graph_docs.nil?
      end

      # Whether both sides ran the cache simulation: cycles per function.
      def cycles?
        !@a.cycles.nil? && !@b.cycles.nil?
      end

      # The instructions documents of side :a or :b, for its call tree
      # (nil unless #call_graphs?).
      def graph_docs(side) = (side == :a ? @a : @b).graph_docs

      # The report document's "functions" entry of a diff (doc/output.md).
      def to_h
        {
          "a_per_request" => mean(@a.totals), "b_per_request" => mean(@b.totals),
          "difference" => @diff.difference, "difference_ci" => @diff.difference_ci,
          "confidence" => @diff.confidence, "compared" => @rows.size, "changed" => @diff.changed_count,
          "batches" => [@a.totals.size, @b.totals.size], "inclusive" => call_graphs?, "cycles" => cycles?,
          "unlisted_max" => [@a.unlisted_max, @b.unlisted_max],
          "rows" => @rows.first(ROWS_KEPT).map { |row| row_h(row) }
        }
      end

      private

      def row_h(row)
        object, name = row.key
        h = { "object" => object, "name" => name }.merge(row.to_h)
        if call_graphs?
          a_calls = mean_of(@a.calls, row.key)
          b_calls = mean_of(@b.calls, row.key)
          a_each = per_call(row.a, a_calls)
          b_each = per_call(row.b, b_calls)
          h.merge!(figure("inclusive", row.key))
          h.merge!("a_calls" => a_calls, "b_calls" => b_calls, "per_call_difference" => a_each && b_each && b_each - a_each)
        end
        h.merge!(figure("cycles", row.key)) if cycles?
        h
      end

      # {"a_NAME", "b_NAME", "NAME_difference"} of a per-batch figure.
      def figure(name, key)
        a = mean_of(@a.public_send(name), key)
        b = mean_of(@b.public_send(name), key)
        { "a_#{name}" => a, "b_#{name}" => b, "#{name}_difference" => b - a }
      end

      def per_call(cost, calls)
        calls.positive? ? cost / calls : nil
      end

      def mean_of(batches, key)
        mean(batches.map { |batch| batch.fetch(key, 0.0) })
      end

      def mean(values)
        values.sum.fdiv(values.size)
      end

      # A side's batches: per function its self cost, inclusive cost,
      # calls and cycles per request, from each call graph (or, for a
      # trial stored before them, its costliest functions' self costs).
      def side(docs)
        per = ->(doc, value) { value.to_f / doc["requests"].to_i }
        graphs = docs.map { |doc| doc["call_graph"] }
        listed = docs.map do |doc|
          graph = doc["call_graph"]
          next graph["functions"] if graph

          Array(doc["functions"]).map { |f| { "object" => f["object"], "name" => f["name"], "self" => f["instructions"] } }
        end
        pick = lambda do |field|
          docs.zip(listed).map { |doc, functions| functions.to_h { |f| [[f["object"], f["name"]], per.call(doc, f[field])] } }
        end
        all_graphs = graphs.all?
        simulated = all_graphs && docs.all? { |doc| doc["cache_sim"] }
        Side.new(self_costs: pick.call("self"), inclusive: all_graphs ? pick.call("inclusive") : nil,
                 calls: all_graphs ? pick.call("calls") : nil, cycles: simulated ? pick.call("cycles") : nil,
                 totals: docs.map { |doc| doc["per_request"].to_f },
                 unlisted_max: docs.zip(listed).map { |doc, functions| unlisted(doc, functions, per) }.max,
                 graph_docs: all_graphs ? docs : nil)
      end

      # The most a function no batch listed cost per request: the call
      # graph says; the costliest functions' list says it is below its
      # last entry.
      def unlisted(doc, functions, per)
        graph = doc["call_graph"]
        return per.call(doc, graph["unlisted_self_max"]) if graph

        per.call(doc, functions.map { |f| f["self"].to_i }.min.to_i)
      end
    end
  end
end
