# frozen_string_literal: true

module Rackbench
  class Report
    # Whether stored machine records describe the same machine: the
    # environments MachineEnv.capture stored with an experiment and with
    # each run of it (Symbol keys when fresh, String keys read back). A
    # pure function of the records, used wherever results of two runs meet
    # (the gate's sides, a history's series).
    #
    # A machine is its host and its hardware (IDENTITY). A testbed, hosts
    # of one hardware that the user names as one (--label testbed=NAME),
    # is its name and its hardware: its hosts are one machine. What may
    # change on one machine (SOFTWARE: the kernel, the governor) does not
    # make another machine, but it moves figures, so it is said (#notes).
    #
    #   MachineMatch.differences(env_a, env_b) # => ["hostname: ci-1 vs ci-2"]
    module MachineMatch
      # What tells machines apart, each a field of the capture (memory in
      # whole GiB: MemTotal moves by a few MB between kernels).
      IDENTITY = %w[hostname arch cpu_model cpu_count memory_total_gib hypervisor].freeze
      # What may change on one machine and moves figures.
      SOFTWARE = %w[kernel os governor transparent_hugepage].freeze
      GIB = 1024**3

      module_function

      # The fields of +env+ that identify its machine: IDENTITY's, with
      # "testbed" => +testbed+ in place of the hostname when one is given.
      def key(env, testbed: nil)
        key = IDENTITY.to_h { |field| [field, field_of(env, field)] }
        testbed ? { "testbed" => testbed }.merge(key.except("hostname")) : key
      end

      # Whether +a+ and +b+ are one machine (or one testbed, when both
      # name the same one).
      def same?(a, b, testbed_a: nil, testbed_b: nil)
        differences(a, b, testbed_a: testbed_a, testbed_b: testbed_b).empty?
      end

      # The identifying fields that differ, in words: ["hostname: ci-1 vs
      # ci-2", "cpu_model: ... vs ..."]; [] for one machine.
      def differences(a, b, testbed_a: nil, testbed_b: nil)
        compare(key(a, testbed: testbed_a), key(b, testbed: testbed_b))
      end

      # The SOFTWARE fields that differ on one machine, in words.
      def notes(a, b)
        compare(SOFTWARE.to_h { |f| [f, field_of(a, f)] }, SOFTWARE.to_h { |f| [f, field_of(b, f)] })
      end

      # One line: "ci-1 (Intel(R) Xeon(R) CPU @ 2.20GHz, 2 CPUs, x86_64,
      # 24 GiB, Linux 6.1.0-18-amd64)".
      def describe(env)
        return "unknown machine (not recorded)" unless env.is_a?(Hash)

        cpus = field_of(env, "cpu_count")
        parts = [field_of(env, "cpu_model"), cpus && "#{cpus} CPU#{"s" unless cpus == 1}", field_of(env, "arch"),
                 (gib = field_of(env, "memory_total_gib")) && "#{gib} GiB",
                 (kernel = field_of(env, "kernel")) && "Linux #{kernel}"].compact
        host = field_of(env, "hostname")
        return "unknown machine (not recorded)" if host.nil? && parts.empty?

        parts.empty? ? host.to_s : "#{host || "unknown host"} (#{parts.join(", ")})"
      end

      def compare(a, b)
        (a.keys | b.keys).reject { |k| a[k] == b[k] }.map { |k| "#{k}: #{a[k].inspect} vs #{b[k].inspect}" }
      end

      def field_of(env, field)
        return nil unless env.is_a?(Hash)
        return (bytes = value(env, "memory_total_bytes")) && (bytes.to_f / GIB).round if field == "memory_total_gib"

        value(env, field)
      end

      def value(env, name)
        env.key?(name) ? env[name] : env[name.to_sym]
      end

      private_class_method :compare, :value
    end
  end
end
