# frozen_string_literal: true

module Rackbench
  module Stats
    # The answers of the bootstraps, kept by their inputs: the same values,
    # confidence, resamples and seed always give the same interval (each
    # bootstrap draws from a generator of its own seed), and a report asks
    # for the same interval many times (once per view: terminal, JSON,
    # CSV, HTML; again for each flag, gate threshold or baseline that reads
    # it). A bootstrap is 10,000 resamples in Ruby, milliseconds each time.
    # Bounded: the oldest answer goes first once it holds SIZE.
    class Memo
      SIZE = 4096

      def initialize(size = SIZE)
        @size = size
        @answers = {}
        @lock = Mutex.new
      end

      # The answer kept for +key+ (Arrays of Floats, Symbols, Integers),
      # else the block's, kept. A copy each time: callers may change theirs.
      def fetch(key)
        found = @lock.synchronize { @answers[key] }
        return found.dup if found

        answer = yield
        return answer if answer.nil?

        @lock.synchronize do
          @answers.shift if @answers.size >= @size
          @answers[key.map { |part| part.is_a?(Array) ? part.dup.freeze : part }.freeze] = answer.dup.freeze
        end
        answer
      end
    end

    BOOTSTRAPS = Memo.new
    # The middle ranks each resample draws (Bootstrap.median_ranks), kept
    # by batch counts, resamples and seed: few keys (a report's batch
    # counts), each two Arrays of `resamples` Integers per side (about
    # 320 KB at 10,000 resamples: at most 32 of them, 10 MB).
    MEDIAN_RANKS = Memo.new(32)
  end
end
