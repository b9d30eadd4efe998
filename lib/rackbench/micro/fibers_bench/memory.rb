# frozen_string_literal: true

# Part of the standalone benchmark script fibers_bench.rb (Ruby 2.6, no gems).
module Rackbench
  module Micro
    module FibersBench
      # Memory of the benchmark's processes from /proc (Linux); nil where
      # /proc cannot tell.
      #
      # RSS peak is VmHWM, the high-water mark of each process's resident
      # set. Summed over forked workers it counts every page they share
      # with the master (copy-on-write) once per process, and so overstates
      # what "processes" really occupies; PSS (proportional set size, from
      # smaps_rollup) divides each shared page among its sharers, so its sum
      # is the honest total. The kernel keeps no peak of PSS: it is read
      # once, at the end of the measured round, with every worker alive.
      module Memory
        module_function

        # {master:, workers:, total:, pss_total:} in bytes; workers is nil
        # without forked workers.
        def peaks(worker_pids)
          master = hwm_bytes("self")
          workers = sum(worker_pids.map { |pid| hwm_bytes(pid) })
          pss = sum(["self", *worker_pids].map { |pid| pss_bytes(pid) })
          total = master && (master + (workers || 0))
          { master: master, workers: worker_pids.empty? ? nil : workers, total: total, pss_total: pss }
        end

        # The sum, or nil when any is unknown.
        def sum(values)
          values.include?(nil) ? nil : values.sum
        end

        def pss_bytes(pid)
          kb = File.read("/proc/#{pid}/smaps_rollup")[/^Pss:\s*(\d+)\s*kB/, 1]
          kb && Integer(kb) * 1024
        rescue SystemCallError, IOError
          nil
        end

        def hwm_bytes(pid)
          kb = File.read("/proc/#{pid}/status")[/^VmHWM:\s*(\d+)\s*kB/, 1]
          kb && Integer(kb) * 1024
        rescue SystemCallError, IOError
          nil
        end
      end
    end
  end
end
