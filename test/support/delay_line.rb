# frozen_string_literal: true

# A link with a known delay, for kernels without tc netem (this VM's has
# no sch_netem: CONFIG_NET_SCH_NETEM is not set). Two TAP devices joined by
# this process: every Ethernet frame read from one is written to the other,
# the frames from the second (the far host's side) held DELAY_MS first, so
# every round trip through the link takes at least DELAY_MS more. Test
# support only (TestNetwork#add_host with delay_ms:), never product code.
#
#   ruby delay_line.rb NEAR_TAP FAR_TAP DELAY_MS
#
# Prints "ready" once both devices exist (the caller then attaches NEAR to
# its bridge and moves FAR into the far host's namespace: the devices keep
# working, held open here); runs until TERM.

TUNSETIFF = 0x400454ca
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000
FRAME_BYTES = 65_536

def open_tap(name)
  tap = File.open("/dev/net/tun", File::RDWR)
  tap.ioctl(TUNSETIFF, [name, IFF_TAP | IFF_NO_PI].pack("a16s!x22"))
  tap
end

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

# One thread, one loop: wait for a frame on either device or for the next
# held frame's time, whichever comes first; read what is there (stamped
# with its time to leave), write what is due. A thread per direction would
# hand the GVL back and forth and add its own wake-up delays.
def run(near, far, delay_s)
  held = [] # [due, frame] from far, in arrival order (so in due order)
  loop do
    timeout = held.empty? ? nil : [held.first[0] - now, 0].max
    readable, = IO.select([near, far], nil, nil, timeout)
    Array(readable).each do |tap|
      frame = tap.read_nonblock(FRAME_BYTES, exception: false)
      next unless frame.is_a?(String)

      tap == near ? write(far, frame) : held << [now + delay_s, frame]
    end
    write(near, held.shift[1]) while held.any? && held.first[0] <= now
  end
end

def write(tap, frame)
  tap.syswrite(frame)
rescue Errno::EIO, Errno::EAGAIN, Errno::ENOBUFS
  nil # the device is not up yet (or full): the frame is lost, as on a link that is down
end

near_name, far_name, delay_ms = ARGV
near = open_tap(near_name)
far = open_tap(far_name)
%w[TERM INT].each { |signal| trap(signal) { exit } }
$stdout.puts "ready"
$stdout.flush
begin
  run(near, far, Float(delay_ms) / 1000.0)
rescue Errno::EBADFD, Errno::EIO, IOError
  nil # a device went away with its namespace: the link is gone
end
