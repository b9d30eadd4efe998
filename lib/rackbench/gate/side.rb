# frozen_string_literal: true

module Rackbench
  class Gate
    # One side of a gate, the baseline or the candidate: the stored
    # experiment it was read from, what it measured (Labels) and the
    # machines its runs ran on (the stored environments).
    Side = Struct.new(:name, :experiment_id, :location, :created_at, :labels, :machines, :rackbench_version,
                      keyword_init: true) do
      # The side of +report+ (a Report).
      def self.of(report)
        e = report.experiment
        created = e[:created_at]
        new(name: e[:name], experiment_id: e[:id], location: report.store_location,
            created_at: created.respond_to?(:utc) ? created.utc.iso8601 : created, labels: report.labels,
            machines: report.machines, rackbench_version: e[:rackbench_version])
      end

      # Whether this side is +other+'s experiment (a gate within one).
      def same_experiment?(other)
        location == other.location && experiment_id == other.experiment_id
      end

      # "experiment bench (id 4)"
      def title
        "experiment #{name} (id #{experiment_id})"
      end

      def to_h
        { "name" => name, "experiment_id" => experiment_id, "location" => location, "created_at" => created_at,
          "labels" => labels.to_h, "labels_text" => labels.text, "rackbench_version" => rackbench_version,
          "machine" => Report::MachineMatch.describe(machines.first) }
      end
    end
  end
end
