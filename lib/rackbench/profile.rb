# frozen_string_literal: true

module Rackbench
  # Profiles under load (doc/experiment.md, `profile:`): a profiled trial
  # runs its server with a profiler for the measured window only
  # (agent/profile.rb), every server process dumps what it sampled, and the
  # runner merges the dumps into one Profile::Merged per trial, stored in
  # the results directory (Profile::Files). Reports read them: top frames
  # (TopFrames), a flame graph (FlameTree, HtmlReport::ProfileSection), a
  # speedscope file (Speedscope).
  #
  # Profiled trials never count in throughput statistics: the profiler
  # costs the server time, so their figures are not the configuration's.
  module Profile
    autoload :Settings, File.expand_path("profile/settings", __dir__)
    autoload :Dump, File.expand_path("profile/dump", __dir__)
    autoload :VernierDump, File.expand_path("profile/vernier_dump", __dir__)
    autoload :ObjspaceDump, File.expand_path("profile/objspace_dump", __dir__)
    autoload :Merged, File.expand_path("profile/merged", __dir__)
    autoload :Collector, File.expand_path("profile/collector", __dir__)
    autoload :Files, File.expand_path("profile/files", __dir__)
    autoload :TopFrames, File.expand_path("profile/top_frames", __dir__)
    autoload :FlameTree, File.expand_path("profile/flame_tree", __dir__)
    autoload :Speedscope, File.expand_path("profile/speedscope", __dir__)
    autoload :Terminal, File.expand_path("profile/terminal", __dir__)

    # A profile that cannot be read or merged.
    class Error < Rackbench::Error; end

    # The record's mark of a profiled trial: load_settings["profile"]
    # (tool, mode, interval, samples), nil for a plain trial.
    def self.of(record)
      settings = record.load_settings
      settings.is_a?(Hash) ? settings["profile"] : nil
    end

    def self.profiled?(record)
      !of(record).nil?
    end
  end
end
