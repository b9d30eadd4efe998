# frozen_string_literal: true

require "digest"
require "fileutils"
require "json"

module Rackbench
  module Instructions
    # Answers about a ruby that valgrind took seconds to a minute to give
    # (Support's: can it run; GcProbe's: where its collector is), kept in
    # the rackbench cache as one JSON file per key, so that the next run
    # asks valgrind nothing.
    class Answers
      # The key of an answer about the interpreter at +exe+ (its real path,
      # size and time, so that an upgraded ruby is asked again) and
      # whatever else it depends on (+parts+); +fallback+ where the
      # interpreter's file cannot be read.
      def self.key(exe, parts, fallback:)
        real = File.realpath(exe)
        stat = File.stat(real)
        Digest::SHA256.hexdigest(JSON.generate([real, stat.size, stat.mtime.to_f, *parts]))[0, 24]
      rescue SystemCallError
        Digest::SHA256.hexdigest(JSON.generate(fallback))[0, 24]
      end

      # +dir+ :: where answers are kept (nil: nowhere); +prefix+ :: of their file names
      def initialize(dir, prefix: "")
        @dir = dir
        @prefix = prefix
      end

      # The answer kept for +key+, or nil.
      def read(key)
        file = path(key)
        file && File.file?(file) ? JSON.parse(File.read(file)) : nil
      rescue JSON::ParserError, SystemCallError
        nil
      end

      # Keeps +answer+ for +key+, written whole by rename: two runs asking
      # at once each write a whole answer.
      def write(key, answer)
        file = path(key)
        return unless file

        FileUtils.mkdir_p(File.dirname(file))
        File.write("#{file}.#{Process.pid}.tmp", JSON.generate(answer))
        File.rename("#{file}.#{Process.pid}.tmp", file)
      rescue SystemCallError
        nil
      end

      private

      def path(key)
        @dir && File.join(@dir, "#{@prefix}#{key}.json")
      end
    end
  end
end
