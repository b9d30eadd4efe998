# frozen_string_literal: true

require_relative "registry"

module Rackbench
  # Topologies: what stands between the load engine and the app server
  # (`proxy:` in the experiment file, doc/topologies.md). "none" sends the
  # load to the server itself; the others put a reverse proxy that
  # rackbench starts per trial in front of it, with a configuration
  # generated from the booted server's own address (never from user text):
  #
  # nginx :: Debian's nginx, keep-alive upstream, no cache
  # nginx-cache :: the same with a cache keyed on the method, URI and Cookie header
  # varnish :: Debian's varnishd, a VCL with the same key and the same policy
  #
  # Each topology's file registers it (Proxy.register), as servers do.
  #
  #   topology = Rackbench::Proxy.fetch("nginx-cache")
  #   topology.unsupported_reason # => nil, or why it cannot run here
  module Proxy
    NONE = "none"
    # The topologies (nginx.rb registers nginx and nginx-cache, varnish.rb
    # varnish), each registered as servers are.
    REGISTRY = Registry.new("proxy", File.join(__dir__, "proxy"))

    autoload :Binary, File.expand_path("proxy/binary", __dir__)
    autoload :NginxConfig, File.expand_path("proxy/nginx_config", __dir__)
    autoload :Nginx, File.expand_path("proxy/nginx", __dir__)
    autoload :VarnishConfig, File.expand_path("proxy/varnish_config", __dir__)
    autoload :Varnish, File.expand_path("proxy/varnish", __dir__)
    autoload :CacheCounts, File.expand_path("proxy/cache_counts", __dir__)
    autoload :Launch, File.expand_path("proxy/launch", __dir__)
    autoload :Running, File.expand_path("proxy/running", __dir__)

    module_function

    # Registers under name the block that makes the topology (a fresh one
    # per fetch: what it finds on the machine is looked up again);
    # +position+ orders `rackbench services` and the documentation's list.
    def register(name, position: nil, &make)
      REGISTRY.register(name, make, position: position)
    end

    # Every value `proxy:` takes: none, then the registered topologies.
    def names
      [NONE, *REGISTRY.names]
    end

    # The topology named name (one of names but none); ConfigError naming
    # the known ones otherwise.
    def fetch(name)
      REGISTRY.fetch(name).call
    end

    # Every registered topology, in names' order.
    def all
      REGISTRY.all.map(&:call)
    end

    # Why the topology named name cannot run on this machine (its program
    # is not installed), or nil; always nil for none.
    def unsupported_reason(name)
      name == NONE ? nil : fetch(name).unsupported_reason
    end
  end
end
