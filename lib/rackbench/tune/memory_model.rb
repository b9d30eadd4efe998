# frozen_string_literal: true

module Rackbench
  module Tune
    # The memory of a server tree as tune predicts it before running a
    # candidate, from a pilot: PSS(P, T) = master + P × worker(T).
    #
    # The pilot runs the server with +processes+ (2 by default: a master
    # and workers, so both are measured) at the fewest and the most
    # candidate threads, under the same closed loop as the candidates, and
    # reads each process's PSS at the end of the measured window from the
    # counting agent's document (the record's +inside+: per process, its
    # role and memory). master is the master's PSS (0 for a server that
    # forks none: its single process is a worker); worker(T) the mean of
    # the workers' PSS at T threads, linear between the two thread counts
    # measured (a thread adds its stack and what its requests keep alive:
    # a fixed amount per thread), and the largest measured beyond them.
    # PSS shares each page among the processes that map it, so the sum over
    # the tree counts every page once: what the tree costs the machine.
    #
    # A server that runs one process at P = 1 (Puma without workers) is
    # predicted as master + worker: conservative by what the master holds
    # that a single process does not.
    class MemoryModel
      # One measured point: +threads+, the master's and the mean worker's
      # PSS (bytes), the workers counted, and the pilot's tree PSS as the
      # sampler saw it at its peak.
      Point = Struct.new(:threads, :master_bytes, :worker_bytes, :workers, :tree_peak_bytes, keyword_init: true)

      attr_reader :points

      # The model from the pilot's records (Trial::Record, ok, each with an
      # inside document), or nil when none has the per-process PSS.
      def self.from_records(records)
        points = records.select(&:ok?).filter_map { |record| point(record) }
        return nil if points.empty?

        new(points.group_by(&:threads).map { |_, same| same.max_by(&:worker_bytes) })
      end

      # The Point of one record, or nil without per-process PSS.
      def self.point(record)
        processes = Array(record.inside&.fetch("processes", nil)).select { |p| p.is_a?(Hash) }
        pss = ->(p) { p.dig("memory", "window_end", "pss_bytes") }
        return nil if processes.empty? || !processes.all? { |p| pss.call(p).is_a?(Numeric) }

        master = processes.select { |p| p["role"] == "master" }
        workers = processes.reject { |p| p["role"] == "master" }
        return nil if workers.empty?

        Point.new(threads: record.threads, master_bytes: master.sum { |p| pss.call(p) },
                  worker_bytes: workers.sum { |p| pss.call(p) }.fdiv(workers.size), workers: workers.size,
                  tree_peak_bytes: record.pss_peak_bytes)
      end

      # points :: Points, at least one
      def initialize(points)
        raise ArgumentError, "a memory model needs a measured point" if points.empty?

        @points = points.sort_by(&:threads).freeze
        freeze
      end

      # The master's PSS: the largest measured (it does not depend on the
      # threads of the workers).
      def master_bytes
        @points.map(&:master_bytes).max
      end

      # A worker's PSS at +threads+: measured, linear between measured
      # thread counts, the nearest measured outside them.
      def worker_bytes(threads)
        below = @points.select { |p| p.threads <= threads }.last
        above = @points.find { |p| p.threads >= threads }
        return (above || below).worker_bytes if below.nil? || above.nil?
        return below.worker_bytes if below.threads == above.threads

        share = (threads - below.threads).fdiv(above.threads - below.threads)
        below.worker_bytes + share * (above.worker_bytes - below.worker_bytes)
      end

      # The predicted PSS of the whole tree with +processes+ workers of
      # +threads+ threads (bytes, rounded).
      def tree_bytes(processes, threads)
        (master_bytes + processes * worker_bytes(threads)).round
      end

      def to_h
        { "master_pss_bytes" => master_bytes.round,
          "points" => @points.map do |p|
            { "threads" => p.threads, "master_pss_bytes" => p.master_bytes.round, "worker_pss_bytes" => p.worker_bytes.round,
              "workers" => p.workers, "tree_pss_peak_bytes" => p.tree_peak_bytes }
          end }
      end
    end
  end
end
