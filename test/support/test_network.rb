# frozen_string_literal: true

require "open3"
require_relative "live_process"

module Rackbench
  module Test
    # Hosts on this machine for the fleet's tests: network namespaces
    # (`ip netns`), each joined by a veth pair to a bridge in the test's own
    # namespace, with an address of a /24 no other interface here uses.
    # Traffic stays on those addresses. Needs root (the tests run as root
    # here and in CI).
    #
    #   TestNetwork.open do |net|
    #     host = net.add_host("bench-a")           # => Host with #address, #namespace
    #     pid = net.spawn(host, "ruby", "-e", "...") # a process in it, with the host name "bench-a"
    #     far = net.add_host("load", delay_ms: 1)   # every packet it sends held 1 ms (tc netem)
    #   end
    #
    # Nothing is left: #close stops every process still in the namespaces
    # (TERM, then KILL), deletes them and the bridge, also when the test
    # failed; names carry the test process's pid, so TestNetwork.sweep
    # removes what a test process that died (kill -9) left, and never
    # another live test's.
    class TestNetwork
      PREFIX = "rbf"
      # delay :: how its delay is made: :netem, :delay_line, or nil (none)
      Host = Struct.new(:name, :namespace, :address, :link, :delay, keyword_init: true)

      def self.open
        network = new
        network.start
        yield network
      ensure
        network&.close
      end

      # Removes the namespaces and bridges of test processes that are gone.
      def self.sweep
        namespaces = capture("ip", "netns", "list").lines.map { |line| line.split.first }.compact
        namespaces.grep(/\A#{PREFIX}(\d+)-/).each do |ns|
          next if LiveProcess.alive?(ns[/\A#{PREFIX}(\d+)-/, 1].to_i)

          stop_processes(ns)
          system("ip", "netns", "delete", ns, err: File::NULL)
        end
        links = capture("ip", "-o", "link", "show").lines.map { |line| line.split(":")[1].to_s.strip.sub(/@.*/, "") }
        links.grep(/\A#{PREFIX}(\d+)[bv]/).each do |link|
          next if LiveProcess.alive?(link[/\A#{PREFIX}(\d+)/, 1].to_i)

          system("ip", "link", "delete", link, err: File::NULL)
        end
      end

      def self.capture(*argv)
        out, status = Open3.capture2e(*argv)
        raise "#{argv.join(" ")} failed: #{out}" unless status.success?

        out
      end

      # TERM, then KILL after a grace, of every process in namespace +ns+.
      def self.stop_processes(ns, grace_s: 10)
        %w[TERM KILL].each do |signal|
          pids = pids(ns)
          return if pids.empty?

          pids.each do |pid|
            Process.kill(signal, pid)
          rescue Errno::ESRCH
            nil
          end
          deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + grace_s
          sleep 0.05 until pids(ns).empty? || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
        end
      end

      def self.pids(ns)
        out, status = Open3.capture2e("ip", "netns", "pids", ns)
        status.success? ? out.split.map(&:to_i) : []
      end

      # The bridge's address: this test process's side of every link.
      attr_reader :gateway

      def initialize
        @tag = "#{PREFIX}#{Process.pid}"
        @hosts = []
        @children = []
        @delay_lines = []
      end

      def start
        self.class.sweep
        @subnet = free_subnet
        @bridge = "#{@tag}b"
        @gateway = "#{@subnet}.1"
        ip("link", "add", @bridge, "type", "bridge")
        ip("addr", "add", "#{@gateway}/24", "dev", @bridge)
        ip("link", "set", @bridge, "up")
        self
      end

      # A new host: a namespace with lo up and an address on the bridge.
      # delay_ms :: every packet the host sends is held this long first
      #             (tc netem on its link; where the kernel has no netem, a
      #             delay line: test/support/delay_line.rb), so every round
      #             trip with it takes at least this much more (default: none)
      def add_host(name, delay_ms: nil)
        index = @hosts.size
        namespace = "#{@tag}-#{name}"
        outside = "#{@tag}v#{index}"
        inside = "#{@tag}i#{index}"
        address = "#{@subnet}.#{index + 10}"
        ip("netns", "add", namespace)
        host = Host.new(name: name, namespace: namespace, address: address, link: inside)
        @hosts << host
        delay = delay_ms && netem?(namespace) ? :netem : delay_ms && :delay_line
        if delay == :delay_line
          delay_line(outside, inside, namespace, delay_ms)
        else
          ip("link", "add", outside, "type", "veth", "peer", "name", inside)
          ip("link", "set", inside, "netns", namespace)
        end
        ip("link", "set", outside, "master", @bridge)
        ip("link", "set", outside, "up")
        in_ns(namespace, "ip", "link", "set", "lo", "up")
        in_ns(namespace, "ip", "addr", "add", "#{address}/24", "dev", inside)
        in_ns(namespace, "ip", "link", "set", inside, "up")
        in_ns(namespace, "tc", "qdisc", "add", "dev", inside, "root", "netem", "delay", "#{delay_ms}ms") if delay == :netem
        host.delay = delay
        host
      end

      # argv run inside +host+'s namespace, with a host name of its own
      # (a UTS namespace: `hostname` there says the host's name).
      def argv(host, *command)
        ["ip", "netns", "exec", host.namespace, "unshare", "--uts", "sh", "-c",
         "hostname \"$0\" && exec \"$@\"", host.name, *command]
      end

      # Starts +command+ in +host+'s namespace; returns its pid (the
      # command's own: the wrappers exec it). Reaped by #close if left.
      def spawn(host, *command, env: {}, **options)
        Process.spawn(env, *argv(host, *command), **options).tap { |pid| @children << pid }
      end

      # Runs +command+ in +host+'s namespace to completion: [output, status].
      def run(host, *command)
        Open3.capture2e(*argv(host, *command))
      end

      # The pids of the processes in +host+'s namespace.
      def pids(host)
        self.class.pids(host.namespace)
      end

      def close
        @hosts.each do |host|
          self.class.stop_processes(host.namespace)
          system("ip", "netns", "delete", host.namespace, err: File::NULL)
        end
        @children.each do |pid|
          Process.wait(pid, Process::WNOHANG) || (Process.kill(:KILL, pid) && Process.wait(pid))
        rescue Errno::ECHILD, Errno::ESRCH
          nil
        end
        @delay_lines.each do |pid|
          Process.kill(:TERM, pid)
          Process.wait(pid)
        rescue Errno::ESRCH, Errno::ECHILD
          nil
        end
        system("ip", "link", "delete", @bridge, err: File::NULL) if @bridge
      end

      private

      # Whether this kernel has tc netem: a trial qdisc on the namespace's lo.
      def netem?(namespace)
        _, status = Open3.capture2e("ip", "netns", "exec", namespace, "tc", "qdisc", "add", "dev", "lo", "root",
                                    "netem", "delay", "0ms")
        system("ip", "netns", "exec", namespace, "tc", "qdisc", "del", "dev", "lo", "root", err: File::NULL) if status.success?
        status.success?
      end

      # The link of a host with a delay, through two TAP devices joined by a
      # delay line process (stopped by #close with the rest).
      def delay_line(outside, inside, namespace, delay_ms)
        reader, writer = IO.pipe
        pid = Process.spawn(RbConfig.ruby, File.expand_path("delay_line.rb", __dir__), outside, inside, delay_ms.to_s,
                            out: writer, pgroup: true)
        writer.close
        @delay_lines << pid
        raise "the delay line did not start" unless reader.gets.to_s.strip == "ready"

        ip("link", "set", inside, "netns", namespace)
      ensure
        reader&.close
      end

      # A 10.231.N.0/24 that no interface of this namespace has.
      def free_subnet
        taken = self.class.capture("ip", "-4", "-o", "addr", "show").scan(/inet 10\.231\.(\d+)\./).flatten.map(&:to_i)
        candidates = (1..254).to_a - taken
        raise "no free 10.231.N.0/24 for the test network" if candidates.empty?

        "10.231.#{candidates[Process.pid % candidates.size]}"
      end

      def ip(*args)
        self.class.capture("ip", *args)
      end

      def in_ns(namespace, *command)
        self.class.capture("ip", "netns", "exec", namespace, *command)
      end
    end
  end
end
