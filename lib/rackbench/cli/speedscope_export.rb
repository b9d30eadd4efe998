# frozen_string_literal: true

require "json"

module Rackbench
  module CLI
    # The profiles of a report as one speedscope file, a profile per
    # configuration.
    module SpeedscopeExport
      module_function

      # Writes report's profiles to path; returns path, or raises
      # UsageError when the experiment has none.
      def write(report, path)
        entries = report.profiles.entries
        raise UsageError, "experiment #{report.experiment[:name]} has no profiled trials: nothing for --speedscope" \
          if entries.empty?

        profiles = entries.to_h { |entry| [entry.config_id, entry.profile] }
        doc = Profile::Speedscope.document(profiles, name: "rackbench #{report.experiment[:name]}")
        File.write(path, JSON.generate(doc))
        path
      rescue SystemCallError => e
        raise Error, "cannot write #{path}: #{e.message}"
      end
    end
  end
end
