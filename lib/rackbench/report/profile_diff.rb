# frozen_string_literal: true

require_relative "diff_rows"
require_relative "flame_diff"

module Rackbench
  class Report
    # Where the time went, at the Ruby level: two configurations' profiles
    # under load (stackprof or Vernier, `profile:`) set one against the
    # other, frame by frame, where callgrind's counts see only C functions
    # and time-measured comparisons have no counts at all. Per frame (a
    # method, a block, a C function, by name and file) its self and total
    # time per request (samples times the interval, over the profiled
    # trial's requests; objects for an allocation profile), each side's
    # mean over its profiled trials (one per batch), the difference with
    # its interval across them and its share of the whole (DiffRows); and
    # the two merged profiles as a differential flame graph (FlameDiff).
    #
    # A profiled trial's server ran slower for its profiler, and by how
    # much varies from trial to trial (Vernier at 100 µs: the same 73,000
    # samples a trial over 2,838 to 6,062 requests, measured): a frame's
    # time per request in a profiled trial carries that whole variation.
    # Its share of the trial's samples does not. So where the plain
    # (measured) trials give the figure a profile's unit sums to (SCALES:
    # the server's CPU per request, allocations per request, from the
    # inside section), a frame's amount per request is its share of each
    # profiled trial's samples times its side's mean of that figure: the
    # profile says where, the unprofiled trials how much. The whole
    # difference is then that figure's, over the plain batches. Without it
    # (wall mode, the agent off), amounts are the profiled trials' own
    # (samples weighed, over the trial's requests), as their own view.
    class ProfileDiff
      # One profiled trial: its profile (Profile::Merged) and the requests
      # of its window.
      Batch = Struct.new(:profile, :requests)
      ROWS_KEPT = 200
      # The inside figure a profile's samples add up to, by mode.
      SCALES = { "cpu" => "cpu_us_per_request", "object" => "allocations_per_request" }.freeze

      # The diff of +b+ against +a+ (Arrays of Batch, each a
      # configuration's profiled trials), or nil when a side has none or
      # the two were not profiled alike (tool, mode, interval).
      # a_inside, b_inside :: each side's InsideSummary (nil: none), for SCALES
      def self.of(a, b, options, a_inside: nil, b_inside: nil)
        a = a.select { |batch| batch.requests.to_i.positive? && batch.profile.samples.positive? }
        b = b.select { |batch| batch.requests.to_i.positive? && batch.profile.samples.positive? }
        return nil if a.empty? || b.empty?

        kinds = (a + b).map { |batch| [batch.profile.tool, batch.profile.mode, batch.profile.interval] }.uniq
        kinds.size == 1 ? new(a, b, options, a_inside: a_inside, b_inside: b_inside) : nil
      end

      def initialize(a, b, options, a_inside: nil, b_inside: nil)
        @profile = a.first.profile
        @scaled_by = SCALES[@profile.mode]
        scales = [a_inside, b_inside].map { |inside| @scaled_by && inside && inside[@scaled_by] }
        scales = [nil, nil] unless scales.all? { |figure| figure && figure.values.sum.positive? }
        @scaled_by = nil unless scales.first
        @a_scale, @b_scale = scales.map { |figure| figure&.values }
        @self_diff = diff_rows(a, b, :self, options)
        @total_diff = diff_rows(a, b, :total, options)
        @a_paths = paths(a, @a_scale)
        @b_paths = paths(b, @b_scale)
        @batches = [a.size, b.size]
      end

      # The inside figure the amounts are scaled to (SCALES), or nil when
      # they are the profiled trials' own.
      attr_reader :scaled_by

      # What a sample's amount is: "microseconds" or "objects".
      def unit = @profile.unit

      def rows = @self_diff.rows

      # The report document's "profile" entry of a diff (doc/output.md).
      def to_h
        totals = @total_diff.rows.to_h { |row| [row.key, row] }
        {
          "tool" => @profile.tool, "mode" => @profile.mode, "interval" => @profile.interval, "unit" => unit,
          "scaled_by" => @scaled_by,
          "batches" => @batches, "confidence" => @self_diff.confidence, "difference" => @self_diff.difference,
          "difference_ci" => @self_diff.difference_ci, "changed" => @self_diff.changed_count,
          "rows" => @self_diff.rows.first(ROWS_KEPT).map { |row| row_h(row, totals[row.key]) },
          "flame" => FlameDiff.nodes(@a_paths, @b_paths, label: ->(key) { key })
        }
      end

      private

      def row_h(row, total)
        name, file = row.key
        { "name" => name, "file" => file }.merge(row.to_h)
                                          .merge("a_total" => total&.a, "b_total" => total&.b,
                                                 "total_difference" => total&.difference,
                                                 "total_difference_ci" => total&.difference_ci)
      end

      def diff_rows(a, b, which, options)
        DiffRows.new(a.map { |batch| frames(batch, which, @a_scale) }, b.map { |batch| frames(batch, which, @b_scale) },
                     a_totals: @a_scale || a.map { |batch| amount(batch, batch.profile.samples) },
                     b_totals: @b_scale || b.map { |batch| amount(batch, batch.profile.samples) },
                     confidence: options.confidence)
      end

      # [name, file] => amount per request: its own samples (the leaf of
      # the stack), or every sample with it on the stack, counted once;
      # as a share of the trial's samples times the side's scale (the
      # plain batches' values of scaled_by) where there is one.
      def frames(batch, which, scale)
        profile = batch.profile
        keys = profile.frames.map { |frame| [frame["name"], frame["file"]] }
        sums = Hash.new(0)
        profile.stacks.each do |stack, count|
          next if stack.empty?

          if which == :self then sums[keys[stack.last]] += count
          else stack.map { |i| keys[i] }.uniq.each { |key| sums[key] += count }
          end
        end
        return sums.transform_values { |count| amount(batch, count) } unless scale

        per_request = mean(scale)
        samples = profile.samples.to_f
        sums.transform_values { |count| count / samples * per_request }
      end

      def amount(batch, samples)
        batch.profile.weight(samples).fdiv(batch.requests)
      end

      def mean(values) = values.sum.fdiv(values.size)

      # The side's profiles merged, as path (frame keys, outermost first)
      # => amount per request over all its requests (or its share of the
      # merged samples times the side's scale).
      def paths(batches, scale)
        merged = Profile::Merged.merge(batches.map(&:profile))
        requests = batches.sum(&:requests).to_f
        keys = merged.frames.map { |frame| [frame["name"], frame["file"]] }
        out = Hash.new(0.0)
        per_sample = scale ? mean(scale) / merged.samples : nil
        merged.stacks.each do |stack, count|
          amount = per_sample ? count * per_sample : merged.weight(count) / requests
          out[[]] += amount
          path = []
          stack.each do |i|
            path += [keys[i]]
            out[path] += amount
          end
        end
        prune(out)
      end

      # Paths under 0.2% of the total left out, as the profile's own flame
      # graph does (Profile::FlameTree), so a chart stays a few thousand
      # rectangles.
      def prune(out)
        min = out[[]] * 0.002
        out.select { |_, amount| amount >= min }
      end
    end
  end
end
