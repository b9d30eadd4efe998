# frozen_string_literal: true

require_relative "function_diff"
require_relative "call_tree"
require_relative "flame_diff"
require_relative "profile_diff"
require_relative "allocation_diff"

module Rackbench
  class Report
    # Where the time went between two configurations, beside their
    # verdict: every diff their stored trials allow, each a pure function
    # of them (doc/output.md, "diffs"):
    #
    # * functions :: callgrind's counts per function (FunctionDiff), when
    #   both measured instructions;
    # * call_tree :: the two call graphs as a differential flame graph
    #   (CallTree, FlameDiff), when both stored them;
    # * profile :: the profiles per Ruby frame and as a differential flame
    #   graph (ProfileDiff), when both were profiled alike;
    # * allocations :: allocations and GC per request (AllocationDiff),
    #   when the inside agent counted on both sides, beside one of the
    #   others (alone, they are the inside section's comparison).
    #
    # The report (one per configuration against its baseline), compare
    # (one per pair) and the gate (under each regression) all build theirs
    # here, so every view shows the same rows.
    class Diffs
      # Diffs of +b+ against +a+ (ConfigSummary objects); +profiles+ the
      # Report::Profiles their profiled trials are in (one per side, nil:
      # none). Nil when no diff can be made.
      def self.between(a, b, options, a_profiles: nil, b_profiles: nil)
        diffs = new(a, b, options, a_profiles: a_profiles, b_profiles: b_profiles)
        diffs.empty? ? nil : diffs
      end

      attr_reader :a, :b, :functions, :profile, :allocations

      def initialize(a, b, options, a_profiles: nil, b_profiles: nil)
        @a = a
        @b = b
        @functions = FunctionDiff.of(a.instruction_trials.select(&:ok?), b.instruction_trials.select(&:ok?), options)
        @profile = ProfileDiff.of(a_profiles ? a_profiles.batches(a.id) : [], b_profiles ? b_profiles.batches(b.id) : [],
                                  options, a_inside: a.inside, b_inside: b.inside)
        @allocations = AllocationDiff.of(a.inside, b.inside, options)
      end

      # No functions and no profile to compare: the allocations alone are
      # the inside section's comparison already.
      def empty?
        @functions.nil? && @profile.nil?
      end

      # The differential flame graph of the two sides' call graphs
      # (FlameDiff nodes), nil unless both stored them.
      def call_tree
        return nil unless @functions&.call_graphs?

        @call_tree ||= FlameDiff.nodes(CallTree.new(@functions.graph_docs(:a)).paths,
                                       CallTree.new(@functions.graph_docs(:b)).paths,
                                       label: ->((object, name)) { [name, object] })
      end

      # One entry of the report document's "diffs" (and of a comparison's
      # or a gate pair's "diffs").
      def to_h
        { "config_id" => @b.id, "baseline_id" => @a.id, "functions" => @functions&.to_h, "call_tree" => call_tree,
          "profile" => @profile&.to_h, "allocations" => @allocations&.to_a }
      end
    end
  end
end
