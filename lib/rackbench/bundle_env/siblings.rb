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
    #
    # Not carried over: the gems a server's lines name (of either
    # environment: puma, unicorn, and rack, which Unicorn's lines pin below
    # 3) and every gem that depends on one of them. Those are the server's
    # choice, not the app's: otherwise Puma's environment, seeded from
    # Unicorn's, would keep Rack 2 and everything locked against it, and
    # what a trial runs would depend on the order environments were made.
    #
    # Nor is an environment whose experiment pins other gems (`gems:`) a
    # sibling: Rails 8's lock would hold Rails 7.1's environment to every
    # version Rails 8 needs. Nor one seeded with another ruby's gem set
    # (lock_seed): its versions are that ruby's resolution, and a ruby
    # that resolves on its own (`gems: per_ruby`) would inherit them. Nor
    # one whose force_ruby_platform differs: its lock names other platforms.
    module Siblings
      MARK_FILE = "rackbench-env.json"

      # Writes env's description into its directory (again when it says
      # something else: one written by an older rackbench lacks fields).
      def self.mark(env)
        path = File.join(env.dir, MARK_FILE)
        # The ruby too, for `rackbench cache`'s listing.
        text = JSON.generate("app_dir" => env.app_dir, "install_path" => env.install_path,
                             "gemfile_extra" => env.gemfile_extra, "gem_pins" => env.gem_pins,
                             "seeded" => !env.lock_seed.nil?, "force_ruby_platform" => env.force_ruby_platform?,
                             "ruby" => env.install.path,
                             "ruby_description" => env.install.description)
        File.write(path, text) unless File.exist?(path) && File.read(path) == text
      end

      # The seed for env's lockfile: the newest lockfile of another
      # environment of env's app and gem directory, without the servers'
      # gems and their dependents, and without its platforms
      # (Lockfile.without_platforms); nil when there is none.
      def self.seed(env)
        newest = Dir.glob(File.join(env.root, "*", MARK_FILE)).filter_map do |mark|
          dir = File.dirname(mark)
          data = dir == env.dir ? nil : sibling_data(mark, env)
          lock = File.join(dir, "Gemfile.lock")
          [File.mtime(lock), lock, data] if data && File.file?(lock)
        end.max_by(&:first)
        return nil unless newest

        text = File.read(newest[1])
        lines = env.gemfile_extra + Array(newest[2]["gemfile_extra"])
        servers = lines.filter_map { |line| line[Gemfile::GEM_NAME, 1] }
        Lockfile.without_platforms(Lockfile.without(text, Lockfile.dependents(text, servers)))
      rescue SystemCallError
        nil # a sibling removed meanwhile: resolve afresh
      end

      def self.sibling_data(mark, env)
        data = JSON.parse(File.read(mark))
        data if data["app_dir"] == env.app_dir && data["install_path"] == env.install_path &&
                (data["gem_pins"] || {}) == env.gem_pins && !data["seeded"] &&
                (data["force_ruby_platform"] == true) == env.force_ruby_platform?
      rescue JSON::ParserError, SystemCallError
        nil
      end

      private_class_method :sibling_data
    end
  end
end
