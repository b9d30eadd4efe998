# frozen_string_literal: true

require "fileutils"
require "json"
require "time"

module Rackbench
  module Bisect
    # The commits whose ruby did not build, kept beside the results
    # (RESULTS/bisect-builds.json): a failed build stores no trial, and a
    # resumed bisection must skip the commit again without building it a
    # second time. Keyed by the step experiment's name and fingerprint
    # (which holds the build's key: another recipe, say with a patch, is
    # built anew). Written atomically after each failure.
    class Journal
      FILE = "bisect-builds.json"

      attr_reader :path

      def initialize(results_dir)
        @path = File.join(results_dir, FILE)
        @entries = File.file?(@path) ? JSON.parse(File.read(@path)) : {}
      rescue JSON::ParserError => e
        raise Error, "#{@path} is damaged (#{e.message.lines.first.strip}): remove it to build those commits again"
      end

      # Why the build of +experiment+ failed before, or nil.
      def failure(experiment)
        @entries.dig(key(experiment), "reason")
      end

      # Records that the build of +experiment+ (at +sha+) failed with +reason+.
      def record(experiment, sha, reason)
        @entries[key(experiment)] = { "commit" => sha, "reason" => reason, "at" => Time.now.utc.iso8601 }
        FileUtils.mkdir_p(File.dirname(@path))
        File.write("#{@path}.tmp", JSON.pretty_generate(@entries))
        File.rename("#{@path}.tmp", @path)
      end

      private

      def key(experiment)
        "#{experiment.name} #{experiment.fingerprint}"
      end
    end
  end
end
