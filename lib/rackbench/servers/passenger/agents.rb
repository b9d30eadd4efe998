# frozen_string_literal: true

require "digest"
require "fileutils"
require "json"
require "time"
require_relative "../../cache_root"

module Rackbench
  module Servers
    # The Passenger agents compiled on this machine, kept under the cache
    # root's passenger-agents/: one per passenger version and C++ compiler
    # (the agent is C++ that links no libruby, so one serves every ruby's
    # gem directory), each beside the record of its compile (how long it
    # took, how many objects), from which the next compile of any version
    # estimates its time.
    #
    #   passenger-agents/6.2.1-3f4db522ef1f/PassengerAgent
    #   passenger-agents/6.2.1-3f4db522ef1f/build.json   {"version", "compiler", "compiled_at", "duration_s", "objects"}
    class PassengerAgents
      AGENT = "PassengerAgent"
      RECORD = "build.json"

      # A compile: its passenger +version+, the +compiler+ (the first line
      # of `c++ --version`), when it ended, how long it took and how many
      # object files it made.
      Build = Struct.new(:version, :compiler, :compiled_at, :duration_s, :objects, keyword_init: true)

      # This machine's C++ compiler: the first line of `c++ --version`
      # with its newline (the digest of agents kept since rackbench 0.1),
      # asked once per process.
      def self.compiler
        @compiler ||= `c++ --version 2>/dev/null`.lines.first.to_s
      rescue SystemCallError
        @compiler = ""
      end

      attr_reader :root

      # :root :: the directory (default: the cache root's passenger-agents/)
      # :compiler :: the C++ compiler's first line of --version (default: this machine's, PassengerAgents.compiler)
      def initialize(root: File.join(CacheRoot.path, "passenger-agents"), compiler: nil)
        @root = root
        @compiler = compiler
      end

      # The compiler's line (asked only when an agent's place is needed).
      def compiler_line
        @compiler ||= self.class.compiler
      end

      # The digest of the compiler, part of each agent's directory: another
      # compiler compiles its own.
      def compiler_key
        Digest::SHA256.hexdigest(compiler_line)[0, 12]
      end

      def dir(version)
        File.join(@root, "#{version}-#{compiler_key}")
      end

      def agent_path(version)
        File.join(dir(version), AGENT)
      end

      # Whether the agent of +version+ is kept for this compiler.
      def cached?(version)
        File.file?(agent_path(version)) && File.executable?(agent_path(version))
      end

      # The versions whose agent is kept for this compiler, newest first.
      def versions
        suffix = "-#{compiler_key}"
        Dir.glob(File.join(@root, "*#{suffix}", AGENT)).filter_map do |path|
          name = File.basename(File.dirname(path))
          name.delete_suffix(suffix) if File.executable?(path)
        end.sort_by { |version| Gem::Version.new(version) }.reverse
      rescue ArgumentError
        []
      end

      # Keeps +agent+ (a compiled PassengerAgent) as the one of +version+,
      # atomically: two runs of two rubies may keep theirs at once.
      def keep(version, agent)
        target = agent_path(version)
        FileUtils.mkdir_p(File.dirname(target))
        FileUtils.cp(agent, "#{target}.tmp.#{Process.pid}", preserve: true)
        File.rename("#{target}.tmp.#{Process.pid}", target)
      end

      # Marks the agent of +version+ used now (copied into a ruby's gems):
      # `rackbench cache` shows when, prune --older-than goes by it.
      def used(version)
        FileUtils.touch(dir(version))
      rescue SystemCallError
        nil
      end

      # Records a finished compile of +version+ beside its agent.
      def record(version, duration_s:, objects:)
        build = { "version" => version, "compiler" => compiler_line.strip, "compiled_at" => Time.now.utc.iso8601,
                  "duration_s" => duration_s.round(1), "objects" => objects }
        path = File.join(dir(version), RECORD)
        FileUtils.mkdir_p(File.dirname(path))
        File.write("#{path}.tmp.#{Process.pid}", JSON.pretty_generate(build))
        File.rename("#{path}.tmp.#{Process.pid}", path)
      rescue SystemCallError
        nil # the record only feeds estimates: a read-only cache must not fail the compile
      end

      # The directory of every kept agent (any version, any compiler), with
      # the record of its compile when it has one (nil for an agent kept
      # before compiles were recorded): [[dir, Build or nil], ...].
      def kept
        Dir.glob(File.join(@root, "*", AGENT)).sort.map do |agent|
          dir = File.dirname(agent)
          [dir, read_build(File.join(dir, RECORD))]
        end
      end

      # Every recorded compile (any version, any compiler), oldest first.
      def builds
        Dir.glob(File.join(@root, "*", RECORD)).filter_map { |path| read_build(path) }.sort_by(&:compiled_at)
      end

      # The last compile on this machine: what the next one estimates
      # from (another version compiles about as many objects), or nil.
      def last_build
        builds.last
      end

      private

      def read_build(path)
        data = JSON.parse(File.read(path))
        Build.new(version: data["version"], compiler: data["compiler"], compiled_at: Time.iso8601(data["compiled_at"]),
                  duration_s: data["duration_s"].to_f, objects: data["objects"].to_i)
      rescue JSON::ParserError, SystemCallError, ArgumentError, TypeError, NoMethodError
        nil
      end
    end
  end
end
