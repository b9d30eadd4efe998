# frozen_string_literal: true

module Rackbench
  module MachineEnv
    # Parsers for the Linux /proc, /sys and /etc files MachineEnv reads. Each
    # takes the file's text (nil when it is missing or unreadable, as on
    # other systems or in containers) and returns nil or "unknown" rather
    # than raising: a missing fact must not stop an experiment.
    module ProcFiles
      module_function

      # The file's text, or nil when it cannot be read.
      def read(path)
        File.read(path)
      rescue SystemCallError, IOError
        nil
      end

      # /proc/cpuinfo => { model:, mhz:, processors:, hypervisor: }.
      # model is "unknown" when no line names it; mhz is the mean of the
      # "cpu MHz" lines (nil when there are none, as on most ARM kernels).
      def cpuinfo(text)
        fields = Hash.new { |h, k| h[k] = [] }
        text.to_s.each_line do |line|
          name, value = line.split(":", 2)
          fields[name.strip] << value.strip if value
        end
        # x86 says "model name"; ARM and others use one of the rest.
        model = ["model name", "Model", "cpu model", "Hardware", "cpu"].lazy.map { |k| fields[k].first }.find { |v| v && !v.empty? }
        mhz = fields["cpu MHz"].map(&:to_f)
        {
          model: model || "unknown",
          mhz: mhz.empty? ? nil : (mhz.sum / mhz.size).round(1),
          processors: fields["processor"].size,
          hypervisor: fields["flags"].any? { |flags| flags.split.include?("hypervisor") }
        }
      end

      # /proc/meminfo => { "MemTotal" => bytes, ... } (the kB values in bytes).
      def meminfo(text)
        text.to_s.each_line.with_object({}) do |line, out|
          next unless (m = line.match(/\A([^:]+):\s+(\d+)(?:\s+kB)?/))

          out[m[1]] = Integer(m[2], 10) * (line.include?("kB") ? 1024 : 1)
        end
      end

      # /proc/loadavg => [1, 5, 15 minute averages], or nil.
      def loadavg(text)
        values = text.to_s.split.first(3)
        return nil unless values.size == 3

        values.map { |v| Float(v) }
      rescue ArgumentError
        nil
      end

      # /proc/uptime => seconds since boot (0.01 s resolution), or nil.
      def uptime_s(text)
        value = text.to_s.split.first
        value && Float(value)
      rescue ArgumentError
        nil
      end

      # A kernel CPU list ("0-3,6,8-9", as in /sys/devices/system/cpu/online)
      # => [0, 1, 2, 3, 6, 8, 9], or nil.
      def cpu_list(text)
        return nil if text.nil? || text.strip.empty?

        text.strip.split(",").flat_map do |part|
          first, last = part.split("-", 2).map { |n| Integer(n, 10) }
          (first..(last || first)).to_a
        end
      rescue ArgumentError
        nil
      end

      # /etc/os-release => its PRETTY_NAME (quotes removed), or nil.
      def os_pretty_name(text)
        line = text.to_s.each_line.find { |l| l.start_with?("PRETTY_NAME=") }
        line && line.split("=", 2).last.strip.delete_prefix('"').delete_suffix('"')
      end

      # The selected value of a sysfs choice file ("always [madvise] never"
      # => "madvise"), or "unknown".
      def sysfs_choice(text)
        text.to_s[/\[([^\]]+)\]/, 1] || "unknown"
      end

      # /proc/PID/stat => [command name, user + system CPU ticks], or nil.
      # The name sits in parentheses and may itself hold spaces and ")", so
      # the fields are counted from the last ")".
      def process_stat(text)
        return nil unless text && (open = text.index("(")) && (close = text.rindex(")"))

        rest = text[(close + 1)..].split
        # rest[0] is field 3 (state); utime and stime are fields 14 and 15.
        utime = rest[11]
        stime = rest[12]
        return nil unless utime && stime

        [text[(open + 1)...close], Integer(utime, 10) + Integer(stime, 10)]
      rescue ArgumentError
        nil
      end
    end
  end
end
