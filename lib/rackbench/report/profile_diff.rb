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
    # A profiled trial's server ran slower for its profiler, and its
    # samples are the profiler's view: the shares and the differences are
    # what to read, not the absolute times (doc/methodology.md).
    class ProfileDiff
      # One profiled trial: its profile (Profile::Merged) and the requests
      # of its window.
      Batch = Struct.new(:profile, :requests)
      ROWS_KEPT = 200

      # The diff of +b+ against +a+ (Arrays of Batch, each a
      # configuration's profiled trials), or nil when a side has none or
      # the two were not profiled alike (tool, mode, interval).
      def self.of(a, b, options)
        a = a.select { |batch| batch.requests.to_i.positive? }
        b = b.select { |batch| batch.requests.to_i.positive? }
        return nil if a.empty? || b.empty?

        kinds = (a + b).map { |batch| [batch.profile.tool, batch.profile.mode, batch.profile.interval] }.uniq
        kinds.size == 1 ? new(a, b, options) : nil
      end

      def initialize(a, b, options)
        @profile = a.first.profile
        @self_diff = diff_rows(a, b, :self, options)
        @total_diff = diff_rows(a, b, :total, options)
        @a_paths = paths(a)
        @b_paths = paths(b)
        @batches = [a.size, b.size]
      end

      # What a sample's amount is: "microseconds" or "objects".
      def unit = @profile.unit

      def rows = @self_diff.rows

      # The report document's "profile" entry of a diff (doc/output.md).
      def to_h
        totals = @total_diff.rows.to_h { |row| [row.key, row] }
        {
          "tool" => @profile.tool, "mode" => @profile.mode, "interval" => @profile.interval, "unit" => unit,
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
        DiffRows.new(a.map { |batch| frames(batch, which) }, b.map { |batch| frames(batch, which) },
                     a_totals: a.map { |batch| amount(batch, batch.profile.samples) },
                     b_totals: b.map { |batch| amount(batch, batch.profile.samples) }, confidence: options.confidence)
      end

      # [name, file] => amount per request: its own samples (the leaf of
      # the stack), or every sample with it on the stack, counted once.
      def frames(batch, which)
        profile = batch.profile
        keys = profile.frames.map { |frame| [frame["name"], frame["file"]] }
        sums = Hash.new(0)
        profile.stacks.each do |stack, count|
          next if stack.empty?

          if which == :self then sums[keys[stack.last]] += count
          else stack.map { |i| keys[i] }.uniq.each { |key| sums[key] += count }
          end
        end
        sums.transform_values { |count| amount(batch, count) }
      end

      def amount(batch, samples)
        batch.profile.weight(samples).fdiv(batch.requests)
      end

      # The side's profiles merged, as path (frame keys, outermost first)
      # => amount per request over all its requests.
      def paths(batches)
        merged = Profile::Merged.merge(batches.map(&:profile))
        requests = batches.sum(&:requests).to_f
        keys = merged.frames.map { |frame| [frame["name"], frame["file"]] }
        out = Hash.new(0.0)
        merged.stacks.each do |stack, count|
          amount = merged.weight(count) / requests
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
