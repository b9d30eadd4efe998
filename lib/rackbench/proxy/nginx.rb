# frozen_string_literal: true

require "fileutils"
require "open3"

module Rackbench
  module Proxy
    # nginx in front of the server, with (nginx-cache) or without a cache.
    class Nginx
      PROGRAM = "nginx"
      CONFIG = "nginx.conf"

      attr_reader :name

      # :cache :: whether it caches (default: false)
      # :binary :: the program, a name on PATH or a path (default: "nginx"; tests pass a missing one)
      def initialize(cache: false, binary: PROGRAM)
        @cache = cache
        @name = cache ? "nginx-cache" : "nginx"
        @binary = binary
      end

      def cache?
        @cache
      end

      def program
        PROGRAM
      end

      # Why it cannot run here, or nil.
      def unsupported_reason
        return nil if path

        "proxy #{name} needs nginx, which is not installed (Debian: apt-get install nginx; bin/setup --all installs it)"
      end

      # "1.22.1", from `nginx -v` (which prints to stderr), or nil.
      def version
        out, _status = Open3.capture2e(path || @binary, "-v")
        out[%r{nginx/(\S+)}, 1]
      rescue SystemCallError
        nil
      end

      # Writes the configuration into dir and returns the argv that runs
      # nginx in the foreground with it (its error log in dir from the
      # start: -e, before the configuration is read).
      #
      # :dir, :listen_port, :upstream_port, :workers, :keepalive, :marker :: as NginxConfig.text takes them
      def prepare(dir:, listen_port:, upstream_port:, workers:, keepalive:, marker:)
        FileUtils.mkdir_p(dir)
        config = File.join(dir, CONFIG)
        File.write(config, NginxConfig.text(dir: dir, listen_port: listen_port, upstream_port: upstream_port,
                                            workers: workers, keepalive: keepalive, cache: @cache, marker: marker))
        [path || @binary, "-p", "#{dir}/", "-e", File.join(dir, NginxConfig::ERROR_LOG), "-c", config]
      end

      # The cache's counter (CacheCounts::AccessLog), or nil without a cache.
      def cache_counter(dir)
        @cache ? CacheCounts::AccessLog.new(File.join(dir, NginxConfig::ACCESS_LOG)) : nil
      end

      private

      def path
        Binary.find(@binary)
      end
    end

    register("nginx", position: 1) { Nginx.new(cache: false) }
    register("nginx-cache", position: 2) { Nginx.new(cache: true) }
  end
end
