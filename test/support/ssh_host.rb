# frozen_string_literal: true

require "fileutils"
require "open3"
require "socket"

module Rackbench
  module Test
    # Debian's OpenSSH server in a TestNetwork host, with a key pair made
    # for the test: the load host of load.host. #ssh_command is what
    # RACKBENCH_SSH_COMMAND takes (the user's ssh with this key, no config
    # file, no known-hosts file). The server runs in the host's namespace
    # and stops with it (TestNetwork#close).
    class SshHost
      SSHD = "/usr/sbin/sshd"

      attr_reader :host

      # net :: the TestNetwork; host :: its Host; dir :: where keys and config go
      def initialize(net, host, dir)
        @net = net
        @host = host
        @dir = File.join(dir, "ssh-#{host.name}")
      end

      def start
        raise "OpenSSH's server is not installed (bin/setup installs openssh-server)" unless File.executable?(SSHD)

        FileUtils.mkdir_p(@dir, mode: 0o700)
        FileUtils.mkdir_p("/run/sshd", mode: 0o755) # sshd's privilege separation directory
        keygen(host_key)
        keygen(client_key)
        FileUtils.cp("#{client_key}.pub", authorized_keys)
        File.write(config, <<~CONFIG)
          Port 22
          ListenAddress #{@host.address}
          HostKey #{host_key}
          AuthorizedKeysFile #{authorized_keys}
          PermitRootLogin prohibit-password
          PasswordAuthentication no
          KbdInteractiveAuthentication no
          UsePAM no
          StrictModes no
          PidFile #{File.join(@dir, "sshd.pid")}
          LogLevel ERROR
        CONFIG
        @pid = @net.spawn(@host, SSHD, "-D", "-e", "-f", config, err: File.join(@dir, "sshd.log"), out: File::NULL)
        wait_listening
        self
      end

      # RACKBENCH_SSH_COMMAND for this host.
      def ssh_command
        "ssh -F /dev/null -i #{client_key} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no " \
          "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
      end

      private

      def host_key = File.join(@dir, "host_ed25519")
      def client_key = File.join(@dir, "client_ed25519")
      def authorized_keys = File.join(@dir, "authorized_keys")
      def config = File.join(@dir, "sshd_config")

      def keygen(path)
        out, status = Open3.capture2e("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path)
        raise "ssh-keygen failed: #{out}" unless status.success?
      end

      def wait_listening
        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 30
        loop do
          Socket.tcp(@host.address, 22, connect_timeout: 1).close
          return
        rescue SystemCallError
          raise "sshd did not listen: #{File.read(File.join(@dir, "sshd.log"))}" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

          sleep 0.1
        end
      end
    end
  end
end
