# frozen_string_literal: true

require "etc"
require_relative "../deep_freeze"

module Rackbench
  module Tune
    # The +tune:+ section of an experiment file (doc/experiment.md): what
    # `rackbench tune` searches and within what.
    #
    # memory_bytes :: the memory budget: PSS of the whole server tree (master and workers), in bytes
    # percentile, target_us :: the latency target: that percentile of every batch at most target_us
    # processes, threads :: candidate counts (Arrays of Integer), or nil for the defaults
    #                       (#candidate_processes, #candidate_threads)
    # batches :: batches of each candidate, or nil for the experiment's
    # connections :: connections of every candidate's closed loop, or nil for 2 × processes × threads
    # knee_tolerance :: the share of the best score within which more threads are said not to help,
    #                   when the best has no interval (one batch) (default: 0.05)
    Settings = Struct.new(:memory_bytes, :percentile, :target_us, :processes, :threads, :batches, :connections,
                          :knee_tolerance, keyword_init: true)

    class Settings
      KEYS = %w[memory processes threads batches connections knee_tolerance].freeze
      # Latency targets: the percentiles a trial's histogram gives, written p50 ... p99.9.
      PERCENTILE_KEY = /\Ap(\d{1,2}(?:\.\d+)?)\z/
      # Memory sizes: decimal (kB, MB, GB: powers of 1000, as the reports
      # print memory) and binary (KiB, MiB, GiB).
      MEMORY_UNITS = { "" => 1, "b" => 1, "kb" => 1e3, "mb" => 1e6, "gb" => 1e9, "tb" => 1e12,
                       "kib" => 2**10, "mib" => 2**20, "gib" => 2**30, "tib" => 2**40 }.freeze
      MEMORY = /\A\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*\z/
      # Default thread candidates: powers of 2 up to 16, past which a
      # Ruby server's threads contend for one GVL in every app we ship.
      DEFAULT_THREADS = [1, 2, 4, 8, 16].freeze
      DEFAULT_KNEE_TOLERANCE = 0.05

      # The settings from the +tune+ value of a file, or nil when the file
      # has none. +checker+ raises ConfigError naming the key.
      def self.parse(value, checker)
        return nil if value.nil?

        checker.mapping!(value, "tune")
        latency_keys = value.keys.map(&:to_s).grep(PERCENTILE_KEY)
        checker.keys!(value.reject { |k, _| latency_keys.include?(k.to_s) }, KEYS, "tune", required: ["memory"])
        checker.fail!("tune", "needs one latency target such as p99: 50ms") if latency_keys.empty?
        checker.fail!("tune", "has #{latency_keys.size} latency targets (#{latency_keys.join(", ")}): give one") if latency_keys.size > 1

        key = latency_keys.first
        percentile = Float(key[PERCENTILE_KEY, 1])
        checker.fail!("tune.#{key}", "percentile must be above 0 and below 100") unless percentile.positive? && percentile < 100
        new(memory_bytes: memory(value["memory"], checker), percentile: percentile,
            target_us: checker.duration!(value[key], "tune.#{key}", positive: true) * 1e6,
            processes: counts(value["processes"], "tune.processes", checker),
            threads: counts(value["threads"], "tune.threads", checker),
            batches: value.key?("batches") ? checker.integer!(value["batches"], "tune.batches", min: 1) : nil,
            connections: connections(value["connections"], checker),
            knee_tolerance: tolerance(value.fetch("knee_tolerance", DEFAULT_KNEE_TOLERANCE), checker)).freeze
      end

      def self.memory(value, checker)
        match = value.is_a?(Integer) ? [nil, value.to_s, ""] : MEMORY.match(value.to_s)
        factor = match && MEMORY_UNITS[match[2].downcase]
        bytes = factor && (Float(match[1]) * factor).round
        checker.fail!("tune.memory", "must be a size such as 1GB, 512MB or 768MiB, got #{value.inspect}") unless bytes&.positive?
        bytes
      end

      def self.counts(value, key, checker)
        return nil if value.nil?

        checker.list!(value, key) { |item, item_key| checker.integer!(item, item_key, min: 1) }.sort.freeze
      end

      def self.connections(value, checker)
        return nil if value.nil? || value == "auto"

        checker.integer!(value, "tune.connections", min: 1)
      end

      def self.tolerance(value, checker)
        ok = value.is_a?(Numeric) && value >= 0 && value < 1
        checker.fail!("tune.knee_tolerance", "must be a fraction in [0, 1), got #{value.inspect}") unless ok
        value.to_f
      end

      # "p99", "p99.9": the key of the target in the file and in latency documents.
      def percentile_name
        "p#{format("%g", percentile)}"
      end

      # The candidate process counts: the file's, else powers of 2 up to
      # this machine's CPUs (at least 1 and 2): a worker per CPU is as much
      # parallelism as the machine has for a CPU-bound app.
      def candidate_processes
        processes || powers_of_two([Etc.nprocessors, 2].max)
      end

      # The candidate thread counts: the file's, else DEFAULT_THREADS.
      def candidate_threads
        threads || DEFAULT_THREADS
      end

      # The connections of a candidate's closed loop: the file's, else two
      # per server thread (at least 2), so every thread has a request
      # waiting while it writes the last response: the candidate is
      # saturated, and the latency measured is the latency at its capacity.
      def connections_for(processes, threads)
        connections || [2 * processes * threads, 2].max
      end

      # Plain data for the experiment's fingerprint (defaults left nil).
      def to_h
        { "memory_bytes" => memory_bytes, "percentile" => percentile, "target_us" => target_us,
          "processes" => processes, "threads" => threads, "batches" => batches, "connections" => connections,
          "knee_tolerance" => knee_tolerance }
      end

      private

      def powers_of_two(limit)
        list = [1]
        list << list.last * 2 while list.last * 2 <= limit
        list
      end
    end
  end
end
