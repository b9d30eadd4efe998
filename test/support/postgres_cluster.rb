# frozen_string_literal: true

require "etc"
require "fileutils"
require "open3"
require_relative "live_process"
require "tmpdir"

module Rackbench
  module Test
    # A real PostgreSQL server from Debian's package, made for one test
    # file: initdb in a temporary directory, started with pg_ctl as a user
    # that is not root (PostgreSQL refuses root; the Debian package's
    # "postgres" account when the tests run as root), listening on
    # 127.0.0.1 and any addresses given (a namespace bridge's), on a port of
    # its own, with trust authentication for the role "rackbench".
    #
    #   PostgresCluster.open(listen: ["10.231.0.1"]) do |pg|
    #     url = pg.create_database("queue") # => "postgres://rackbench@127.0.0.1:PORT/queue"
    #   end
    #
    # Nothing is left behind: #stop in an ensure stops the server and removes
    # its directory; a cluster left by a test process that died (kill -9 of
    # the test run) is found by its directory's name and owner file, and
    # stopped, by the next PostgresCluster.sweep.
    class PostgresCluster
      PREFIX = "rackbench-test-pg-"
      ROLE = "rackbench"
      OWNER_FILE = "owner.pid"
      # The account that runs the server when the tests run as root.
      SERVICE_USER = "postgres"

      # The newest PostgreSQL's bin directory from Debian's packages.
      def self.bin_dir
        dirs = Dir.glob("/usr/lib/postgresql/*/bin").select { |d| File.executable?(File.join(d, "pg_ctl")) }
        dirs.max_by { |d| d[%r{postgresql/(\d+)}, 1].to_i } ||
          raise("PostgreSQL is not installed (bin/setup installs Debian's postgresql)")
      end

      def self.open(**options)
        cluster = new(**options)
        cluster.start
        yield cluster
      ensure
        cluster&.stop
      end

      # Stops and removes the clusters of test processes that no longer exist.
      def self.sweep
        Dir.glob(File.join(Dir.tmpdir, "#{PREFIX}*")).each do |dir|
          owner = File.read(File.join(dir, OWNER_FILE)).to_i rescue 0 # rubocop:disable Style/RescueModifier
          next if owner.positive? && LiveProcess.alive?(owner)

          new(dir: dir).stop
        end
      end

      attr_reader :port, :dir

      # :listen :: addresses besides 127.0.0.1 the server listens on (default: none)
      # :fsync :: commit to the disk as a real store does (default: false: the
      #           tests prove the logic, not the disk; bench/ turns it on)
      def initialize(listen: [], dir: nil, fsync: false)
        @listen = ["127.0.0.1", *listen]
        @dir = dir
        @fsync = fsync
      end

      def start
        self.class.sweep
        @dir = Dir.mktmpdir(PREFIX)
        File.write(File.join(@dir, OWNER_FILE), Process.pid.to_s)
        FileUtils.chown_R(SERVICE_USER, nil, @dir) if Process.uid.zero?
        @port = Rackbench::Ports.free_port
        pg("initdb", "-D", data_dir, "-U", ROLE, "--auth=trust", "-E", "UTF8", "--no-sync")
        # initdb trusts the loopback only: the hosts on the test network's
        # /24 of each address reach it too.
        hba = @listen.drop(1).map { |address| "host all #{ROLE} #{address.sub(/\.\d+\z/, ".0")}/24 trust\n" }
        File.write(File.join(data_dir, "pg_hba.conf"), hba.join, mode: "a")
        # Sockets in the cluster's own directory, never /var/run/postgresql.
        @options = ["-p #{@port}", "-k #{@dir}", "-c listen_addresses=#{@listen.join(",")}", "-c fsync=#{@fsync ? "on" : "off"}",
                   "-c max_connections=200", "-c shared_buffers=32MB"].join(" ")
        resume
        self
      rescue StandardError
        log = File.join(@dir.to_s, "server.log")
        warn File.read(log).lines.last(20).join if File.file?(log)
        stop
        raise
      end

      # Creates database +name+; returns its URL on +host+.
      def create_database(name, host: "127.0.0.1")
        pg("createdb", "-h", "127.0.0.1", "-p", @port.to_s, "-U", ROLE, name)
        url(name, host: host)
      end

      def url(name, host: "127.0.0.1")
        "postgres://#{ROLE}@#{host}:#{@port}/#{name}"
      end

      # Stops the server now (PostgreSQL's fast shutdown: sessions are
      # ended, committed work is kept) and removes the directory.
      def stop
        return unless @dir && File.directory?(@dir)

        if File.file?(File.join(data_dir, "postmaster.pid"))
          _, status = run_pg("pg_ctl", "-D", data_dir, "-m", "fast", "-w", "-t", "60", "stop")
          run_pg("pg_ctl", "-D", data_dir, "-m", "immediate", "-w", "-t", "60", "stop") unless status.success?
        end
        FileUtils.rm_rf(@dir)
      end

      # Stops the server, keeping its data (a database that is down).
      def pause
        pg("pg_ctl", "-D", data_dir, "-m", "fast", "-w", "-t", "60", "stop")
      end

      # Starts it again after #pause, on the same port.
      def resume
        pg("pg_ctl", "-D", data_dir, "-l", File.join(@dir, "server.log"), "-w", "-t", "120", "-o", @options, "start")
      end

      private

      def data_dir
        File.join(@dir, "data")
      end

      def pg(*argv)
        out, status = run_pg(*argv)
        raise "#{argv.first} failed: #{out.lines.last(5).join}" unless status.success?

        out
      end

      def run_pg(program, *args)
        argv = [File.join(self.class.bin_dir, program), *args]
        argv = ["runuser", "-u", SERVICE_USER, "--", *argv] if Process.uid.zero?
        Open3.capture2e(*argv, chdir: @dir)
      end
    end
  end
end
