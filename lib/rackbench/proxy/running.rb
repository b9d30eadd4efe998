# frozen_string_literal: true

module Rackbench
  module Proxy
    # A started proxy (Launch#start): where it listens, its window's
    # sample and cache counts, its stop, and the record's document.
    class Running
      attr_reader :topology, :process, :dir, :boot_s, :version

      def initialize(topology:, process:, dir:, boot_s:, version:, sampler:, stop_grace_s:)
        @topology = topology
        @process = process
        @dir = dir
        @boot_s = boot_s
        @version = version
        @sampler = sampler
        @stop_grace_s = stop_grace_s
        @counter = topology.cache_counter(dir)
        @window = nil
        @stop_s = nil
      end

      def port
        @process.port
      end

      def alive?
        @process.alive?
      end

      # The window starts: the proxy's tree is sampled, its cache counted.
      # Called with the server's sampler (LoadRun's window edges). A count
      # or a sample that cannot start is left out (nil in the document),
      # never the server's sample nor the measurement.
      def start
        @mark = begin
          @counter&.mark
        rescue Error, SystemCallError
          nil
        end
        @sampling = begin
          @sampler.start
          true
        rescue Error, SystemCallError
          false
        end
        self
      end

      # The window ends: { "sample" => the Sampler's summary, "cache" =>
      # CacheCounts or nil }. A count that cannot be read is left out,
      # never the measurement.
      def stop
        sample = begin
          @sampling ? @sampler.stop : nil
        rescue Error, SystemCallError
          nil
        end
        cache = begin
          @counter && !@mark.nil? ? @counter.since(@mark) : nil
        rescue Error, SystemCallError
          nil
        end
        @window = { "sample" => sample&.transform_keys(&:to_s), "cache" => cache }
      end

      # Stops the proxy's whole tree (ServerProcess#stop: TERM, grace, KILL,
      # reap); returns its seconds.
      def stop_process
        @stop_s ||= @process.stop(grace_s: @stop_grace_s)[:stop_s]
      end

      # "proxy nginx exited with status 1 during the measurement: ..."
      def failure(when_text)
        "proxy #{topology.name}: #{@process.failure(when_text)}"
      end

      # The record's proxy document (Trial::Record#proxy, doc/store.md).
      def to_h
        { "name" => topology.name, "program" => topology.program, "version" => version, "port" => port,
          "boot_s" => boot_s&.round(4), "stop_s" => @stop_s&.round(4), "sample" => @window&.fetch("sample"),
          "cache" => @window&.fetch("cache") }
      end
    end
  end
end
