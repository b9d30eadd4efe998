# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # Read access to a report document ("rackbench-report" format_version
    # 2, doc/output.md) for the charts and tables: checks its format once
    # and gives every configuration a display name that is unique, so
    # charts can use it as a category.
    class Document
      FORMAT = "rackbench-report"
      FORMAT_VERSION = 2
      # Verdicts as the Report writes them, plus "no data" for a
      # configuration without one (every trial failed).
      VERDICTS = ["baseline", "faster", "slower", "no difference detected", "too few batches", "no baseline",
                  "no data"].freeze

      attr_reader :raw

      # document :: the Hash of Report#to_h, or the same parsed from JSON
      #             (String keys)
      def initialize(document)
        unless document.is_a?(Hash) && document["format"] == FORMAT
          raise Error, "not a #{FORMAT} document (expected a Hash with \"format\" => \"#{FORMAT}\")"
        end
        unless document["format_version"] == FORMAT_VERSION
          raise Error, "#{FORMAT} format_version #{document["format_version"].inspect} is not supported " \
                       "(the HTML report reads version #{FORMAT_VERSION})"
        end

        @raw = document
        @names = unique_names
      end

      def experiment
        @raw["experiment"] || {}
      end

      def settings
        @raw["settings"] || {}
      end

      # What the throughput counts: "req/s", or "msg/s" for a micro-benchmark.
      def rate_unit
        @raw["rate_unit"] || "req/s"
      end

      # The dimensions that vary, in the report's order.
      def dimensions
        Array(@raw["dimensions"])
      end

      def configs
        Array(@raw["configs"])
      end

      def trials
        Array(@raw["trials"])
      end

      def ok_trials
        trials.select { |t| t["status"] == "ok" }
      end

      def failed_trials
        trials.reject { |t| t["status"] == "ok" }
      end

      # The configuration's label (its id when it has none), made unique
      # among the configurations by a " (2)", " (3)" suffix.
      def name(config)
        @names.fetch(config["id"]) { config["label"] || config["id"] }
      end

      # The display name of the configuration with this id, or the id
      # itself when no configuration has it.
      def name_for_id(config_id)
        @names.fetch(config_id) { config_id.to_s }
      end

      # Display names in report order.
      def names
        configs.map { |c| name(c) }
      end

      # The verdict, one of VERDICTS.
      def verdict(config)
        VERDICTS.include?(config["verdict"]) ? config["verdict"] : "no data"
      end

      private

      def unique_names
        seen = Hash.new(0)
        configs.each_with_object({}) do |config, names|
          base = (config["label"] || config["id"]).to_s
          seen[base] += 1
          names[config["id"]] = seen[base] == 1 ? base : "#{base} (#{seen[base]})"
        end
      end
    end
  end
end
