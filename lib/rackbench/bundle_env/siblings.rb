# frozen_string_literal: true

require "json"

module Rackbench
  class BundleEnv
    # The other environments of one app that install into the same gem
    # directory (one ruby engine and ABI): those of its other servers,
    # groups or rubies of that ABI. Each environment leaves a small
    # description of itself (MARK_FILE) that says whose it is.
    #
    # An app without a Gemfile.lock would otherwise be resolved afresh by
    # each environment: to the newest versions of the day, so an environment
    # made after a release compiles that release's native gems again
    # although an older one is installed. Seeded from a sibling's lockfile,
    # Bundler keeps its versions wherever the new Gemfile allows (its
    # conservative resolution), and uses the gems already installed.
    module Siblings
      MARK_FILE = "rackbench-env.json"

      # Writes env's description into its directory (once).
      def self.mark(env)
        path = File.join(env.dir, MARK_FILE)
        return if File.exist?(path)

        File.write(path, JSON.generate("app_dir" => env.app_dir, "install_path" => env.install_path))
      end

      # The text of the newest lockfile of another environment of env's app
      # and gem directory, or nil when there is none.
      def self.newest_lock(env)
        locks = Dir.glob(File.join(env.root, "*", MARK_FILE)).filter_map do |mark|
          dir = File.dirname(mark)
          next if dir == env.dir || !same?(mark, env)

          lock = File.join(dir, "Gemfile.lock")
          [File.mtime(lock), lock] if File.file?(lock)
        end
        newest = locks.max_by(&:first)
        newest && File.read(newest.last)
      rescue SystemCallError
        nil # a sibling removed meanwhile: resolve afresh
      end

      def self.same?(mark, env)
        data = JSON.parse(File.read(mark))
        data["app_dir"] == env.app_dir && data["install_path"] == env.install_path
      rescue JSON::ParserError, SystemCallError
        false
      end

      private_class_method :same?
    end
  end
end
