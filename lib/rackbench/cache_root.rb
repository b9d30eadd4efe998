# frozen_string_literal: true

module Rackbench
  # The directory rackbench keeps what it builds once and reuses across
  # runs: Bundler environments (bundles/), rubies built from source
  # (rubies/), downloaded sources (sources/). $RACKBENCH_CACHE, else
  # ${XDG_CACHE_HOME:-~/.cache}/rackbench. `rackbench cache` lists and
  # prunes it (doc/cache.md).
  module CacheRoot
    def self.path(env = ENV)
      File.expand_path(env["RACKBENCH_CACHE"] || File.join(env["XDG_CACHE_HOME"] || File.join(Dir.home, ".cache"),
                                                           "rackbench"))
    end
  end
end
