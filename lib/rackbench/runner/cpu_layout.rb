# frozen_string_literal: true

require "etc"

module Rackbench
  class Runner
    # Which CPUs the server and the load engine get. The measuring process
    # must not share a core with what it measures: on a machine with 2 or
    # more CPUs the engine takes the last one and the server all the others.
    # On one CPU nothing is pinned (and the layout says so).
    #
    # :server_cpus :: Array of CPU numbers for the server, or nil (unpinned)
    # :engine_cpus :: Array of CPU numbers for the engine, or nil
    CpuLayout = Struct.new(:server_cpus, :engine_cpus, keyword_init: true) do
      # The layout for the CPUs this process may run on.
      def self.detect(cpus: available_cpus)
        return new(server_cpus: nil, engine_cpus: nil) if cpus.size < 2

        new(server_cpus: cpus[0...-1], engine_cpus: [cpus.last])
      end

      # CPUs in this process's affinity mask (what taskset may use), falling
      # back to every online CPU.
      def self.available_cpus
        status = File.read("/proc/self/status")[/^Cpus_allowed_list:\s*(\S+)/, 1]
        return (0...Etc.nprocessors).to_a unless status

        status.split(",").flat_map do |part|
          first, last = part.split("-").map(&:to_i)
          (first..(last || first)).to_a
        end
      rescue SystemCallError
        (0...Etc.nprocessors).to_a
      end

      def pinned?
        !server_cpus.nil?
      end

      # argv prefix pinning a command to the server's CPUs (taskset from
      # util-linux; the pinning is inherited by every process it forks).
      def server_prefix
        pinned? ? ["taskset", "-c", server_cpus.join(",")] : []
      end

      def to_h
        { "server_cpus" => server_cpus, "engine_cpus" => engine_cpus }
      end
    end
  end
end
