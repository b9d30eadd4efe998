# frozen_string_literal: true

module Rackbench
  module Capacity
    # The answer per configuration, from its searches (one per batch): the
    # median capacity over batches with a bootstrap interval of that median,
    # the search's resolution, requests per day at that rate, the latency at
    # the answer, and every step for the latency-throughput curve. Pure:
    # it reads the finished searches (Driver#run's jobs) and computes.
    class Summary
      FORMAT = "rackbench-capacity"
      FORMAT_VERSION = 1
      SECONDS_PER_DAY = 86_400
      CONFIDENCE = 0.95
      RESAMPLES = 10_000
      # Percentiles reported at the answer and drawn on the curve.
      CURVE_PERCENTILES = %w[p50 p95 p99].freeze

      # One configuration's answer.
      # label :: short name (server app PxT, then what else varies)
      # capacity_rps :: median over the batches whose search found (or
      #                 capped) an answer; nil when none did
      # interval :: [low, high] 95% bootstrap interval of that median (nil under 2 answers)
      # resolution_rps :: the widest gap between an answer and the first
      #                   fail above it over the batches (the true capacity
      #                   may lie that far above)
      # requests_per_day :: 86,400 x capacity_rps
      # latency_us :: "p50", "p95", "p99" at the answer: medians over the
      #               passing steps run at each batch's answer
      # capped :: a batch's search passed at max_rate
      Answer = Struct.new(:config, :label, :searches, :capacity_rps, :interval, :resolution_rps, :requests_per_day,
                          :latency_us, :capped, keyword_init: true) do
        def steps = searches.flat_map { |s| s[:result].steps }
        def steps_run = steps.size
        def invalid_steps = steps.count { |s| s.status == :invalid }
        def notes = searches.filter_map { |s| s[:result].note && "batch #{s[:batch]}: #{s[:result].note}" }
      end

      attr_reader :experiment, :settings, :answers

      # experiment :: the Experiment searched; jobs :: Driver#run's jobs (done)
      def initialize(experiment, jobs)
        @experiment = experiment
        @settings = experiment.capacity
        @answers = experiment.configurations.map do |config|
          searches = jobs.select { |j| j.config.key == config.key }.sort_by(&:batch)
                         .map { |j| { batch: j.batch, seed: j.seed, result: j.search.result } }
          answer(config, searches)
        end
      end

      # The JSON document (doc/output.md, "The capacity document").
      def to_h
        {
          "format" => FORMAT, "format_version" => FORMAT_VERSION, "rackbench_version" => VERSION,
          "experiment" => { "name" => experiment.name, "fingerprint" => experiment.fingerprint,
                            "seed" => experiment.seed, "batches" => experiment.batches },
          "settings" => settings.to_h.merge("confidence" => CONFIDENCE),
          "configs" => answers.map { |a| answer_h(a) }
        }
      end

      # A configuration's short name: server, app, processes x threads, and
      # whatever else varies between the configurations.
      def label(config)
        varying = config.dims.reject { |dim, _| %w[server app processes threads].include?(dim) }
                        .select { |dim, _| experiment.dimensions.fetch(dim, []).size > 1 }
        ["#{config.server.label} #{config.app.name} #{config.processes}x#{config.threads}",
         *varying.map { |dim, value| "#{dim}=#{value.nil? ? "null" : value}" }].join(" ")
      end

      private

      def answer(config, searches)
        answered = searches.select { |s| s[:result].rate }
        rates = answered.map { |s| s[:result].rate.to_f }
        capacity = rates.empty? ? nil : Stats.median(rates)
        interval = Stats.bootstrap_ci(rates, confidence: CONFIDENCE, resamples: RESAMPLES, seed: experiment.seed)
        Answer.new(config: config, label: label(config), searches: searches, capacity_rps: capacity, interval: interval,
                   resolution_rps: answered.filter_map { |s| s[:result].resolution_rps }.max,
                   requests_per_day: capacity && (capacity * SECONDS_PER_DAY).round,
                   latency_us: latency_at_answer(answered),
                   capped: answered.any? { |s| s[:result].status == :capped })
      end

      def latency_at_answer(answered)
        at = answered.flat_map do |s|
          s[:result].steps.select { |step| step.rate == s[:result].rate && step.verdict.pass? }
        end
        CURVE_PERCENTILES.to_h do |key|
          values = at.filter_map { |step| step.verdict.latency_us[key] }
          [key, values.empty? ? nil : Stats.median(values)]
        end
      end

      def answer_h(answer)
        {
          "label" => answer.label, "key" => answer.config.key, "dims" => answer.config.dims,
          "capacity_rps" => answer.capacity_rps, "interval_rps" => answer.interval,
          "resolution_rps" => answer.resolution_rps, "requests_per_day" => answer.requests_per_day,
          "capped" => answer.capped, "latency_us" => answer.latency_us,
          "steps_run" => answer.steps_run, "invalid_steps" => answer.invalid_steps,
          "searches" => answer.searches.map { |s| search_h(s) }
        }
      end

      def search_h(search)
        result = search[:result]
        { "batch" => search[:batch], "seed" => search[:seed], "status" => result.status.to_s,
          "capacity_rps" => result.rate, "lower_bound_rps" => result.lower_bound, "first_fail_rps" => result.first_fail,
          "resolution_rps" => result.resolution_rps, "note" => result.note,
          "steps" => result.steps.map { |step| step_h(step) } }
      end

      def step_h(step)
        v = step.verdict
        { "index" => step.ask.index, "phase" => step.phase.to_s, "rate" => step.rate, "status" => v.status.to_s,
          "reason" => v.reason, "latency_us" => v.latency_us, "error_ratio" => v.error_ratio,
          "sent_rps" => v.sent_rps, "offered_rps" => v.offered_rps, "late_fraction" => v.late_fraction,
          "unsent" => v.unsent }.merge(v.delivery_ratio ? { "delivery_ratio" => v.delivery_ratio } : {})
      end
    end
  end
end
