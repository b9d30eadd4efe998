# frozen_string_literal: true

module Rackbench
  class Report
    # Whether two experiments ran on the same machine, from the machine
    # each stored when it started and when each of its runs started
    # (MachineEnv.capture): a ratio of throughputs measured on two machines
    # says as much about the machines as about what was varied, so
    # `rackbench compare` across experiments checks this first.
    module MachineCheck
      # What makes a machine for a comparison: its identity and the
      # software that moves figures on it (MachineMatch, the one definition
      # of both); what varies from minute to minute (load, free memory,
      # busy processes) is left out.
      KEYS = (MachineMatch::IDENTITY + MachineMatch::SOFTWARE).freeze

      module_function

      # The distinct machines +report+'s experiment ran on: the stored
      # descriptions (KEYS only) of its start and of every run.
      def machines(report)
        envs = [report.experiment[:environment], *report.runs.map { |run| run[:environment] }]
        envs.filter_map { |env| env.is_a?(Hash) ? KEYS.to_h { |key| [key, MachineMatch.field_of(env, key)] }.compact : nil }
            .reject(&:empty?).uniq
      end

      # How the machines of +report_a+ and +report_b+ differ: [{"key", "a",
      # "b"}] for each key whose values (over every machine of a side)
      # differ; empty when they ran on the same machine, or when a side has
      # no stored machine (results from before it was recorded).
      def differences(report_a, report_b)
        a = machines(report_a)
        b = machines(report_b)
        return [] if a.empty? || b.empty?

        KEYS.filter_map do |key|
          values_a = a.map { |m| m[key] }.uniq
          values_b = b.map { |m| m[key] }.uniq
          next if values_a == values_b

          { "key" => key, "a" => values_a.size == 1 ? values_a.first : values_a,
            "b" => values_b.size == 1 ? values_b.first : values_b }
        end
      end

      # "cpu_model: Intel Xeon (A) vs AMD EPYC (B); kernel: 6.1.0 (A) vs 6.5.0 (B)"
      def text(differences)
        differences.map { |d| "#{d["key"]}: #{value(d["a"])} (A) vs #{value(d["b"])} (B)" }.join("; ")
      end

      def value(value)
        case value
        when Array then value.map { |v| value(v) }.join(" and ")
        when Hash then value.map { |k, v| "#{k}=#{v}" }.join(",")
        when nil then "unknown"
        else value.to_s
        end
      end
    end
  end
end
