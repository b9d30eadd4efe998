# frozen_string_literal: true

require "digest"
require "fileutils"
require "json"
require "securerandom"

module Rackbench
  module Rubies
    # Keeps what probing a ruby found, in the file RACKBENCH_PROBE_CACHE
    # names, so that a command run many times in a row does not start
    # every interpreter again to ask what it is. JRuby's start-up (a JVM,
    # ~3 s and two cores' worth of CPU here) is most of `rackbench run`'s
    # own start-up; a test suite that runs rackbench fifty times pays it
    # fifty times. Opt-in: without the variable nothing is cached, and every
    # command probes as before.
    #
    # An entry is used only while everything it was read from is unchanged:
    # the found file, the interpreter and libruby it ran, the Bundler script
    # it reported (the file's device, inode, size, mtime and ctime: an
    # upgrade replaces them), the probe script's text and the environment
    # the probe ran with. Anything else probes again. Only a candidate that
    # is itself what rackbench runs is kept: a version manager's shim picks
    # its ruby by the directory it runs in (.ruby-version), which no file's
    # signature shows. Broken rubies are never kept: the next command says
    # again why they do not run.
    #
    # The trial still proves which ruby runs (the identity check inside
    # every server process): a stale entry could name a ruby, never make a
    # trial measure another one unnoticed.
    class ProbeCache
      ENV_VAR = "RACKBENCH_PROBE_CACHE"
      # Changes when the format of an entry does.
      FORMAT = 1

      # The cache the environment names, or nil.
      def self.from_env(env)
        path = env[ENV_VAR].to_s
        return nil if path.empty?

        # What the probe runs with (Prober cleans the same way).
        new(path, env_digest: Digest::SHA256.hexdigest(JSON.generate(CleanEnv.clean(env).to_h.sort)))
      end

      # +path+ :: the cache file (created on #save)
      # :env_digest :: the digest of the environment the probes run with
      def initialize(path, env_digest:)
        @path = path
        @env_digest = env_digest
        @stored = read
        @fresh = {}
      end

      # The Install stored for +candidate+ while it still holds, else the
      # block's (a probe), kept when it can be.
      def fetch(candidate)
        cached = entry(candidate)
        return cached if cached

        yield.tap { |install| keep(candidate, install) }
      end

      # Writes the entries probed since #initialize beside those stored (by
      # rename: a reader never sees half a file; two commands saving at once
      # lose at most the other's new entries, which are then probed again).
      def save
        return if @fresh.empty?

        entries = read.merge(@fresh)
        dir = File.dirname(@path)
        FileUtils.mkdir_p(dir)
        temp = File.join(dir, ".#{File.basename(@path)}.#{SecureRandom.hex(6)}")
        File.write(temp, JSON.generate("format" => FORMAT, "script" => script_digest, "entries" => entries))
        File.rename(temp, @path)
      rescue SystemCallError => e
        warn "rackbench: could not write the ruby probe cache #{@path}: #{e.message}"
      ensure
        FileUtils.rm_f(temp) if temp && File.exist?(temp)
      end

      private

      def key(candidate)
        [candidate.path, candidate.source, candidate.command, @env_digest].join("\0")
      end

      def entry(candidate)
        stored = @stored[key(candidate)]
        return nil unless stored && stored["signature"] == signature(stored["install"])

        Install.new(**stored["install"].transform_keys(&:to_sym))
      rescue ArgumentError, TypeError
        nil
      end

      def keep(candidate, install)
        return if install.error || install.path != candidate.real_path

        data = install.to_h.transform_keys(&:to_s).merge("source" => install.source.to_s)
        @fresh[key(candidate)] = { "install" => data, "signature" => signature(data) }
      end

      # What the entry was read from, as the files are now.
      def signature(install)
        install.values_at("path", "exe", "libruby", "bundler_bin").map { |file| file_signature(file) }
      end

      def file_signature(file)
        return nil if file.nil?

        stat = File.stat(file)
        [stat.dev, stat.ino, stat.size, stat.mtime.to_r.to_s, stat.ctime.to_r.to_s]
      rescue SystemCallError
        "missing"
      end

      def read
        data = JSON.parse(File.read(@path))
        return {} unless data.is_a?(Hash) && data["format"] == FORMAT && data["script"] == script_digest

        data["entries"].is_a?(Hash) ? data["entries"] : {}
      rescue SystemCallError, JSON::ParserError
        {}
      end

      def script_digest
        @script_digest ||= Digest::SHA256.file(Prober::SCRIPT).hexdigest
      end
    end
  end
end
