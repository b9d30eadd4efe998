# frozen_string_literal: true

require_relative "registry"

module Rackbench
  # Services: the database and caches an app needs, started by rackbench
  # from Debian's packages (`services:` of an app, doc/services.md):
  #
  # postgresql :: PostgreSQL (initdb, postgres), a unix socket; the app gets DATABASE_URL
  # redis :: Redis (redis-server), a unix socket; the app gets REDIS_URL
  # memcached :: memcached, a free loopback port; the app gets MEMCACHE_SERVERS
  #
  # They live for the whole run: started before its first trial (Started),
  # in a private directory, pinned beside the server and tied to the
  # runner's life like the servers; after the app's setup rackbench keeps a
  # template of their state and restores it before every trial; their CPU
  # and memory over each trial's window go into the trial's record; they
  # are stopped when the run ends.
  #
  #   kind = Rackbench::Services.fetch("postgresql")
  #   kind.missing_reason # => nil, or why it cannot run here
  module Services
    # The kinds of service, each registered by its own file as servers are.
    REGISTRY = Registry.new("service", File.join(__dir__, "services"))

    autoload :Kind, File.expand_path("services/kind", __dir__)
    autoload :Spec, File.expand_path("services/spec", __dir__)
    autoload :Account, File.expand_path("services/account", __dir__)
    autoload :Command, File.expand_path("services/command", __dir__)
    autoload :Resp, File.expand_path("services/resp", __dir__)
    autoload :Endpoint, File.expand_path("services/endpoint", __dir__)
    autoload :Postgresql, File.expand_path("services/postgresql", __dir__)
    autoload :PostgresqlState, File.expand_path("services/postgresql_state", __dir__)
    autoload :Redis, File.expand_path("services/redis", __dir__)
    autoload :Memcached, File.expand_path("services/memcached", __dir__)
    autoload :Workspace, File.expand_path("services/workspace", __dir__)
    autoload :Launch, File.expand_path("services/launch", __dir__)
    autoload :Running, File.expand_path("services/running", __dir__)
    autoload :Group, File.expand_path("services/group", __dir__)
    autoload :Started, File.expand_path("services/started", __dir__)

    module_function

    # Registers under name the block that makes the kind (a fresh one per
    # fetch: its programs are looked up again); +position+ orders the
    # report's CSV columns of the services and `rackbench services`.
    def register(name, position: nil, &make)
      REGISTRY.register(name, make, position: position)
    end

    # The names of every kind of service, in their order.
    def names
      REGISTRY.names
    end

    # The kind of service named name; ConfigError naming the known ones
    # otherwise.
    def fetch(name)
      REGISTRY.fetch(name).call
    end

    # Every kind of service, in names' order.
    def all
      REGISTRY.all.map(&:call)
    end
  end
end
