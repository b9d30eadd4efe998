# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "rackbench/process/ports"

# Which sockets listen on a port, and whether a server's processes hold
# them: read from a /proc of the test's own (the kernel's tables' format).
describe "Rackbench::Ports listeners" do
  let(:proc_dir) { Dir.mktmpdir("rackbench-proc") }
  after { FileUtils.rm_rf(proc_dir) }

  def header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

  def row(local, state, inode)
    "   0: #{local} 00000000:0000 #{state} 00000000:00000000 00:00000000 00000000  1000        0 #{inode} 1 " \
      "0000000000000000 100 0 0 10 0\n"
  end

  def tables(tcp: "", tcp6: "")
    FileUtils.mkdir_p(File.join(proc_dir, "net"))
    File.write(File.join(proc_dir, "net", "tcp"), header + tcp)
    File.write(File.join(proc_dir, "net", "tcp6"), header + tcp6)
  end

  def process(pid, *links)
    dir = File.join(proc_dir, pid.to_s, "fd")
    FileUtils.mkdir_p(dir)
    links.each_with_index { |target, fd| File.symlink(target, File.join(dir, fd.to_s)) }
  end

  it "finds the listening sockets of a port on any address, not its connections nor other ports" do
    # 0x1F90 = 8080, 0x1F91 = 8081; 0A is LISTEN, 01 ESTABLISHED.
    tables(tcp: row("0100007F:1F90", "0A", 111) + row("0100007F:1F90", "01", 222) + row("0100007F:1F91", "0A", 333),
           tcp6: row("00000000000000000000000000000000:1F90", "0A", 444))
    assert_equal [111, 444], Rackbench::Ports.listener_inodes(8080, proc_dir: proc_dir)
    assert_equal [], Rackbench::Ports.listener_inodes(9090, proc_dir: proc_dir)
    assert_nil Rackbench::Ports.listener_inodes(8080, proc_dir: File.join(proc_dir, "none")), "no tables: cannot tell"
  end

  it "says whether one of the pids holds one of the sockets" do
    process(10, "/dev/null", "socket:[111]")
    process(20, "socket:[999]", "pipe:[5]")
    assert Rackbench::Ports.held_by?([111], [20, 10], proc_dir: proc_dir)
    refute Rackbench::Ports.held_by?([111], [20], proc_dir: proc_dir), "another socket, a pipe"
    refute Rackbench::Ports.held_by?([111], [30], proc_dir: proc_dir), "a process gone"
  end
end
