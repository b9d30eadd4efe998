# frozen_string_literal: true

module Rackbench
  class LoadResult
    # An https:// run's TLS figures, as functions of its document's "tls"
    # object (doc/output.md): what a handshake cost, and the share of the
    # window's responses that waited for one. The one definition that
    # `rackbench load`'s summary and the report (a stored trial's figures)
    # both use. nil for a run without TLS, or without the handshakes a
    # figure needs.
    module TlsFigures
      module_function

      # The mean time of the trial's full handshakes, in µs. The warmup's
      # and the window's together: a handshake costs the same in both, and
      # with kept-alive connections the warmup makes them all.
      def full_handshake_us(tls)
        pooled_mean(tls, "full_handshake_us") { |phase| phase["handshakes"].to_i - phase["resumed"].to_i }
      end

      # The same for handshakes that resumed a session.
      def resumed_handshake_us(tls)
        pooled_mean(tls, "resumed_handshake_us") { |phase| phase["resumed"].to_i }
      end

      # The share of the window's responses whose latency included a
      # handshake (0 with kept-alive connections, 1 when every request
      # opens its own).
      def handshake_share(tls)
        tls && tls["handshake_response_fraction"]
      end

      # The mean over both phases of latency object +key+, weighted by the
      # count the block gives for each; nil without any.
      def pooled_mean(tls, key)
        return nil unless tls

        phases = [tls, tls["warmup"]].compact
        counts = phases.map { |phase| yield(phase) }
        total = counts.sum
        return nil unless total.positive?

        phases.zip(counts).sum { |phase, n| n * phase.dig(key, "mean").to_f } / total
      end
    end
  end
end
