# frozen_string_literal: true

module Rackbench
  module Profile
    # A profile as a speedscope file (https://www.speedscope.app, its file
    # format: "https://www.speedscope.app/file-format-schema.json"): the
    # frames shared, and one profile of type "sampled" per Merged given,
    # whose samples are stacks of frame indices from the outermost frame to
    # the leaf, each weighed by its samples times the interval
    # (microseconds of CPU or wall time; allocated objects, unit "none", in
    # object mode).
    module Speedscope
      SCHEMA = "https://www.speedscope.app/file-format-schema.json"

      module_function

      # The file's document (a Hash, JSON-ready). profiles :: Hash of name
      # => Merged (a profile per configuration, say); name :: the file's
      # name in speedscope.
      def document(profiles, name:)
        index = {}
        frames = []
        entries = profiles.map do |profile_name, profile|
          local = profile.frames.map do |frame|
            index[[frame["name"], frame["file"], frame["line"]]] ||= begin
              frames << { "name" => frame["name"], "file" => frame["file"], "line" => frame["line"] }.compact
              frames.size - 1
            end
          end
          sampled(profile_name, profile, local)
        end
        { "$schema" => SCHEMA, "shared" => { "frames" => frames }, "profiles" => entries, "name" => name,
          "activeProfileIndex" => 0, "exporter" => "rackbench #{Rackbench::VERSION}" }
      end

      def sampled(name, profile, local)
        stacks = profile.stacks.reject { |stack, _| stack.empty? }
        weights = stacks.map { |_, count| profile.weight(count) }
        { "type" => "sampled", "name" => name, "unit" => profile.mode == "object" ? "none" : "microseconds",
          "startValue" => 0, "endValue" => weights.sum,
          "samples" => stacks.map { |stack, _| stack.map { |i| local[i] } }, "weights" => weights }
      end
    end
  end
end
