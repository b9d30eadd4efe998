# frozen_string_literal: true

module Rackbench
  # Named parts that register themselves from files of their own (as
  # Roda's plugins do): the app-server adapters (servers/NAME.rb), the
  # proxies in front of them (proxy/), the services an app needs
  # (services/). Adding one is adding its file.
  #
  #   SERVERS = Registry.new("server", File.expand_path("servers", __dir__))
  #   SERVERS.register("puma", Puma.new)    # in servers/puma.rb
  #   SERVERS.fetch("puma")                 # loads servers/puma.rb first when needed
  class Registry
    # what :: what an entry is, for the error that names an unknown one ("server")
    # dir :: the folder of the files that register entries
    def initialize(what, dir)
      @what = what
      @dir = dir
      @entries = {}
      @positions = {}
    end

    # Registers item under name. +position+ places it in #names before the
    # entries without one (a documented order: the CSV's columns of the
    # services follow it); the others follow by name.
    def register(name, item, position: nil)
      key = name.to_s
      @entries[key] = item
      @positions[key] = position
      item
    end

    # Removes the entry registered as name (a test's own, once the test is
    # done with it); returns it, or nil.
    def unregister(name)
      @positions.delete(name.to_s)
      @entries.delete(name.to_s)
    end

    # The entry registered as name, its file loaded first when it has one,
    # every file otherwise (a file may register several names: nginx.rb
    # registers nginx and nginx-cache). Raises ConfigError listing the
    # known names when there is none.
    def fetch(name)
      key = name.to_s
      unless @entries.key?(key)
        path = files.find { |file| File.basename(file, ".rb") == key }
        path ? require(path) : load_all
      end
      @entries.fetch(key) { raise ConfigError, "unknown #{@what} #{key.inspect} (known: #{names.join(", ")})" }
    end

    # The entry registered as name (its file loaded first when it has
    # one), or nil.
    def [](name)
      key = name.to_s
      path = files.find { |file| File.basename(file, ".rb") == key }
      require path if path && !@entries.key?(key)
      @entries[key]
    end

    def key?(name)
      load_all
      @entries.key?(name.to_s)
    end

    # The names of every entry (all files loaded first): those with a
    # position in its order, then the others by name.
    def names
      load_all
      @entries.keys.sort_by { |key| [@positions[key] || Float::INFINITY, key] }
    end

    # Every entry, in #names' order.
    def all
      names.map { |name| @entries.fetch(name) }
    end

    private

    # Only files of the registry's own folder are ever required, so a name
    # cannot point outside it.
    def files
      Dir[File.join(@dir, "*.rb")]
    end

    def load_all
      files.sort.each { |path| require path }
    end
  end
end
