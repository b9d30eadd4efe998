# frozen_string_literal: true

require "openssl"
require "socket"

module Rackbench
  class ServerProcess
    # Proves, before measuring, that a load.tls server serves TLS as the
    # trial names it: one handshake on 127.0.0.1:port, checked against the
    # run's authority, that must present the trial's own certificate and,
    # for load.protocol h2, choose h2 by ALPN. What it negotiated goes into
    # the trial's identity record ("tls"), beside what its processes ran.
    module TlsCheck
      TIMEOUT_S = 10

      module_function

      # Returns { "version", "cipher", "alpn", "certificate_sha256" };
      # raises SetupError naming what differs.
      #
      # :port :: the server's port on 127.0.0.1
      # :tls :: the trial's Tls::Certificate
      # :alpn :: the protocol the load offers: "h2", or "http/1.1"
      def verify!(port:, tls:, alpn:)
        socket = Socket.tcp(Servers::HOST, port, connect_timeout: TIMEOUT_S)
        ssl = OpenSSL::SSL::SSLSocket.new(socket, context(tls, alpn))
        ssl.hostname = nil
        ssl.sync_close = true
        handshake(ssl)
        facts = { "version" => ssl.ssl_version, "cipher" => ssl.cipher&.first, "alpn" => ssl.alpn_protocol,
                  "certificate_sha256" => OpenSSL::Digest::SHA256.hexdigest(ssl.peer_cert.to_der) }
        check!(facts, tls, alpn)
        facts
      rescue OpenSSL::SSL::SSLError, SystemCallError, IOError, SocketError => e
        raise SetupError, "TLS check failed on port #{port}: #{e.message}"
      ensure
        ssl ? ssl.close : socket&.close
      end

      def context(tls, alpn)
        OpenSSL::SSL::SSLContext.new.tap do |ctx|
          ctx.ca_file = tls.ca_path
          ctx.verify_mode = OpenSSL::SSL::VERIFY_PEER
          ctx.verify_hostname = false # checked below, against the address, as the engine does
          ctx.alpn_protocols = [alpn]
        end
      end

      def handshake(ssl)
        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + TIMEOUT_S
        begin
          ssl.connect_nonblock
        rescue IO::WaitReadable, IO::WaitWritable => e
          left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
          raise SetupError, "TLS check: no handshake within #{TIMEOUT_S} s" if left <= 0

          e.is_a?(IO::WaitReadable) ? ssl.to_io.wait_readable(left) : ssl.to_io.wait_writable(left)
          retry
        end
      end

      def check!(facts, tls, alpn)
        unless OpenSSL::SSL.verify_certificate_identity(OpenSSL::X509::Certificate.new(File.read(tls.cert_path)),
                                                        Servers::HOST)
          raise SetupError, "TLS check: the trial's certificate does not name #{Servers::HOST}"
        end
        if facts["certificate_sha256"] != tls.fingerprint
          raise SetupError, "TLS check: the server presented another certificate than the trial's " \
                            "(sha256 #{facts["certificate_sha256"][0, 16]}..., expected #{tls.fingerprint[0, 16]}...)"
        end
        return if alpn != "h2" || facts["alpn"] == "h2"

        raise SetupError, "TLS check: the server chose #{facts["alpn"] ? "\"#{facts["alpn"]}\"" : "no protocol"} " \
                          "by ALPN, not h2"
      end
    end
  end
end
