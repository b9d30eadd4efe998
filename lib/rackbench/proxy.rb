# frozen_string_literal: true

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
  #   topology = Rackbench::Proxy.fetch("nginx-cache")
  #   topology.unsupported_reason # => nil, or why it cannot run here
  module Proxy
    NONE = "none"
    NAMES = [NONE, "nginx", "nginx-cache", "varnish"].freeze

    autoload :Binary, File.expand_path("proxy/binary", __dir__)
    autoload :NginxConfig, File.expand_path("proxy/nginx_config", __dir__)
    autoload :Nginx, File.expand_path("proxy/nginx", __dir__)
    autoload :VarnishConfig, File.expand_path("proxy/varnish_config", __dir__)
    autoload :Varnish, File.expand_path("proxy/varnish", __dir__)
    autoload :CacheCounts, File.expand_path("proxy/cache_counts", __dir__)
    autoload :Launch, File.expand_path("proxy/launch", __dir__)
    autoload :Running, File.expand_path("proxy/running", __dir__)

    module_function

    # The topology named name (one of NAMES but none); KeyError otherwise.
    def fetch(name)
      case name
      when "nginx" then Nginx.new(cache: false)
      when "nginx-cache" then Nginx.new(cache: true)
      when "varnish" then Varnish.new
      else raise KeyError, "unknown proxy #{name.inspect}; known: #{NAMES.join(", ")}"
      end
    end

    # Why the topology named name cannot run on this machine (its program
    # is not installed), or nil; always nil for none.
    def unsupported_reason(name)
      name == NONE ? nil : fetch(name).unsupported_reason
    end
  end
end
