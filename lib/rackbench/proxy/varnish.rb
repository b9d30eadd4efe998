# frozen_string_literal: true

require "fileutils"
require "open3"

module Rackbench
  module Proxy
    # varnishd in front of the server, in the foreground (-F), with its own
    # working directory (-n) under the trial's and a VCL generated per trial.
    class Varnish
      PROGRAM = "varnishd"
      STAT_PROGRAM = "varnishstat"
      CONFIG = "default.vcl"
      WORK_DIR = "varnish"
      # Enough for a benchmark app's pages; varnish's default is bigger
      # than the machine should spend on a trial.
      STORAGE = "malloc,64m"

      attr_reader :name

      # :binary :: varnishd, a name on PATH or a path (default: "varnishd")
      # :stat_binary :: varnishstat (default: "varnishstat")
      def initialize(binary: PROGRAM, stat_binary: STAT_PROGRAM)
        @name = "varnish"
        @binary = binary
        @stat_binary = stat_binary
      end

      def cache?
        true
      end

      def program
        PROGRAM
      end

      def unsupported_reason
        missing = [@binary, @stat_binary].reject { |program| Binary.find(program) }
        return nil if missing.empty?

        "proxy varnish needs #{missing.join(" and ")}, not installed (Debian: apt-get install varnish; " \
          "bin/setup --all installs it)"
      end

      # "7.1.1", from `varnishd -V`, or nil.
      def version
        out, _status = Open3.capture2e(Binary.find(@binary) || @binary, "-V")
        out[/varnish-([0-9][^\s)]*)/, 1]
      rescue SystemCallError
        nil
      end

      # Writes the VCL into dir and returns the argv of varnishd in the
      # foreground: no jail (-j none: as root it would switch to a user who
      # may not reach the results directory), no management port (-T none),
      # its shared memory in dir/varnish (varnishstat -n reads it).
      #
      # :dir, :listen_port, :upstream_port :: the proxy's directory, its port, the server's port
      # :workers, :keepalive, :marker :: unused: varnish sizes its thread pools and its backend
      #                                  connections itself, and keeps its environment
      def prepare(dir:, listen_port:, upstream_port:, **)
        FileUtils.mkdir_p(dir)
        vcl = File.join(dir, CONFIG)
        File.write(vcl, VarnishConfig.text(upstream_port: upstream_port))
        [Binary.find(@binary) || @binary, "-F", "-j", "none", "-T", "none", "-n", File.join(dir, WORK_DIR),
         "-a", "127.0.0.1:#{Integer(listen_port)}", "-f", vcl, "-s", STORAGE]
      end

      # The cache's counter (CacheCounts::Varnishstat).
      def cache_counter(dir)
        CacheCounts::Varnishstat.new(Binary.find(@stat_binary) || @stat_binary, File.join(dir, WORK_DIR))
      end
    end

    register("varnish", position: 3) { Varnish.new }
  end
end
