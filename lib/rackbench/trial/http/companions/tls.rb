# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      module Companions
        # load.tls: the server started with the run's certificate (the
        # adapter's variables for it), and once its identity is checked, one
        # handshake that proves it serves that certificate (and h2 by ALPN
        # for load.protocol h2); what it negotiated joins the identity
        # record ("tls"). A server or a topology that cannot serve it is
        # left out of the plan with the reason.
        class Tls < Companion
          ORDER = 90

          # load.tls needs a server that terminates TLS itself, no proxy in
          # front (it would have to terminate TLS in the server's place),
          # and the engine beside the server.
          def unsupported_reason(config, _variant)
            return nil unless config.load[:tls]
            return "load.tls with a proxy in front is not supported yet (#{config.proxy} would terminate TLS)" if config.proxied?
            # The run's certificate names 127.0.0.1 only; a load host reaches
            # the server at another address, which the engine would refuse.
            return "load.tls with a load host (load.host) is not supported yet: the run's certificate names 127.0.0.1 only" if config.load[:host]

            Servers.fetch(config.server.name).tls_reason
          end

          def part(scene)
            scene.tls && Part.new(scene)
          end

          # One trial over TLS.
          class Part < Companion::Part
            def initialize(scene)
              super()
              @scene = scene
            end

            def env
              { "trial" => @scene.adapter.tls_env(@scene.tls, @scene.work_dir) }
            end

            def prove(_server, port, identity)
              alpn = @scene.config.load[:protocol] == "h2" ? "h2" : "http/1.1"
              identity["tls"] = ServerProcess::TlsCheck.verify!(port: port, tls: @scene.tls, alpn: alpn)
            end
          end
        end

        Http.companion :tls, Tls
      end
    end
  end
end
