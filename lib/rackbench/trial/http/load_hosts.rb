# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # The load hosts of an experiment's configurations (load.host: ssh
      # URLs, RemoteHost): each prepared once, before anything is measured
      # or stored (ssh works, the engine is there and is this host's
      # version, the address the server will listen on); and for each trial
      # that uses one, the round trip measured before the trial, then, once
      # the server is up, the proof that the load host reaches it there.
      # Each failure is one line (SetupError).
      class LoadHosts
        # Seconds of the probe: a short run of the load host's engine
        # against the booted server.
        PROBE_S = 0.2

        # :remote :: called with a load.host URL, returns its RemoteHost (default: RemoteHost.new)
        def initialize(remote: RemoteHost.method(:new))
          @remote = remote
          @hosts = {}
        end

        # Prepares every load host the configurations name (Kind#check!).
        def prepare!(configurations)
          configurations.filter_map { |config| config.load[:host] }.uniq.each { |url| fetch(url) }
        end

        # The prepared RemoteHost of +url+.
        def fetch(url)
          @hosts[url] ||= @remote.call(url).prepare!
        end

        # The trial's network document before it boots (Record#network):
        # the load host, the address, the round trip now; nil without a
        # load host.
        def network(config)
          url = config.load[:host]
          return nil unless url

          host = fetch(url)
          host.to_h(host.round_trip)
        end

        # The address the trial's server listens on (Servers::HOST without a
        # load host).
        def bind_host(config)
          url = config.load[:host]
          url ? fetch(url).server_address : Servers::HOST
        end

        # The engine that drives the trial's load: the load host's, once it
        # has reached the booted +server+ at its address; +local+ without
        # a load host.
        def engine(config, server, path, local:)
          url = config.load[:host]
          return local unless url

          engine = fetch(url).engine
          probe(engine, url, server, path)
          engine
        end

        private

        # A short run of the load host's engine against the server: every
        # request failing to connect means the load host cannot reach the
        # address (a firewall, a route), said before the measurement.
        def probe(engine, url, server, path)
          target = "http://#{server.host}:#{server.port}#{path}"
          settings = LoadSettings.build(url: target, connections: 1, threads: 1, duration_s: PROBE_S, warmup_s: 0.0,
                                        timeout_s: 2.0, allow_remote: true)
          result = engine.run(settings)
          return if result.requests.positive?

          raise SetupError, "load host #{url} cannot reach the server at #{server.host}:#{server.port} " \
                            "(#{result.errors.select { |_, n| n.positive? }.map { |k, n| "#{k} errors: #{n}" }.join(", ")})"
        rescue EngineError => e
          raise SetupError, "load host #{url}: the engine failed against the server at #{target}: #{e.message}"
        end
      end
    end
  end
end
