# frozen_string_literal: true

module Rackbench
  module Stats
    # What a published series knows of its own noise (StepDetection's
    # learned rule): the run-to-run noise of its newest neighbouring runs,
    # the threshold it sets, and the critical value of a z whose sigma was
    # estimated from them.
    class StepDetection
      # What the series knows of its noise after its last run: sigma (log
      # units, nil under the default rule), the pairs it came from, the
      # rule, and the smallest step one run flags.
      Noise = Struct.new(:sigma, :pairs, :rule, :threshold, :z, keyword_init: true)

      # The critical value for +z+ standard errors when sigma is estimated
      # from +pairs+ differences: Student's t with pairs - 1 degrees of
      # freedom at the normal tail of +z+, by the Cornish-Fisher expansion
      # (Abramowitz and Stegun 26.7.5). From 20 pairs a z of 5 asks for
      # 7.3; from 100, 5.35: a sigma known from few runs is taken as
      # uncertain, not as exact (its error alone would turn 5 sigma into 4
      # about one time in five).
      def self.critical(z, pairs)
        v = (pairs - 1).to_f
        z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2) +
          (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
      end

      private

      # The newest run's neighbouring pairs that count for the noise: the
      # last noise_pairs of them that no step splits, kept as the runs come
      # (@window, and their sizes sorted: @sizes), rebuilt when the steps
      # change. Every run asks for the noise, so it must not cost a sort.
      def push_window(pair)
        @window ||= []
        @sizes ||= []
        @window << pair
        size = pair[1].abs
        @sizes.insert(@sizes.bsearch_index { |v| v >= size } || @sizes.size, size)
        return if @window.size <= @s.noise_pairs

        dropped = @window.shift[1].abs
        @sizes.delete_at(@sizes.bsearch_index { |v| v >= dropped })
      end

      def splits = @steps.filter_map { |s| s.index unless s.state == "refuted" }

      def rebuild_window(current)
        @window = []
        @pairs.reverse_each do |pair|
          next if current.include?(pair[0])

          @window.unshift(pair)
          break if @window.size == @s.noise_pairs
        end
        @sizes = @window.map { |_, d| d.abs }.sort
        @window_splits = current
      end

      # What the series knows of its noise at its newest run +n+, with the
      # steps found so far.
      def noise_at(n)
        return Noise.new(rule: "default", pairs: 0, threshold: @s.default_threshold) if n.nil?

        current = splits
        rebuild_window(current) unless current == (@window_splits ||= [])
        key = [n, @pairs.size, current]
        return @noise if @noise_key == key

        @noise_key = key
        @noise = noise_of(n)
      end

      def noise_of(n)
        pairs = @sizes.to_a.size
        return Noise.new(rule: "default", pairs: pairs, threshold: @s.default_threshold) if pairs < @s.min_pairs

        sigma = Stats.run_noise_of_sizes(@sizes)
        z = StepDetection.critical(@s.z, pairs)
        nb = [@s.max_before, @position[n] - @position[@start] + 1].min.clamp(1, nil)
        threshold = [@s.equivalence, Math.exp(z * sigma * Math.sqrt(1 + 1.0 / nb)) - 1].max
        Noise.new(sigma: sigma, pairs: pairs, rule: "learned", threshold: threshold, z: z)
      end

      # sigma at run +n+ for a learned step, from the pairs there are even
      # when the step's own pair left fewer than min_pairs.
      def sigma_at(n)
        noise = noise_at(n)
        return noise.sigma if noise.sigma

        Stats.run_noise_of_sizes(@sizes.size >= 2 ? @sizes : @pairs.map { |_, d| d.abs }.sort)
      end
    end
  end
end
