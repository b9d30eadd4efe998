# frozen_string_literal: true

require "digest"
require "fileutils"
require "json"

module Rackbench
  module Profile
    # Where a trial's merged profile is kept: a file of the results
    # directory named by the trial's key,
    #
    #   <results>/profiles/<key, made safe>-<digest of the key>.json
    #
    # (the digest keeps two keys that only differ in unsafe characters
    # apart). The record's load_settings["profile"]["file"] holds the same
    # path, relative to the results directory.
    module Files
      DIRECTORY = "profiles"

      module_function

      # The path relative to the results directory.
      def relative_path(key)
        safe = key.gsub(/[^A-Za-z0-9._=-]/, "_")
        File.join(DIRECTORY, "#{safe}-#{Digest::SHA256.hexdigest(key)[0, 8]}.json")
      end

      # Writes profile (a Merged) for key, whole by rename; returns the
      # relative path.
      def write(results_dir, key, profile)
        relative = relative_path(key)
        path = File.join(results_dir, relative)
        FileUtils.mkdir_p(File.dirname(path))
        File.write("#{path}.tmp", JSON.generate(profile.to_h))
        File.rename("#{path}.tmp", path)
        relative
      end

      # The Merged profile of a trial's record, or nil when the record is
      # not profiled or its profile is not there (a failed trial, a results
      # directory copied without its profiles/).
      def read(results_dir, record)
        mark = Profile.of(record)
        return nil unless mark && mark["file"]

        path = File.join(results_dir, mark["file"])
        return nil unless File.file?(path)

        Merged.from_h(JSON.parse(File.read(path))).tagged(record.key)
      rescue JSON::ParserError => e
        raise Error, "#{path} is damaged: #{e.message.lines.first.strip}"
      end
    end
  end
end
