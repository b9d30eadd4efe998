# frozen_string_literal: true

require "yaml"

module Rackbench
  class Experiment
    # Experiments made from another one by the commands that decide their
    # next trials from the results of the last ones (capacity search,
    # tuning): each step is an ordinary experiment, written out as the file
    # a user could have written (its source_text), validated by the same
    # parser, run by the same Runner, stored under its own name and
    # fingerprint, and resumed like any other. Nothing in a step bypasses
    # what a plain `rackbench run` checks.
    module Derive
      # A copy of this experiment named +name+, with +changes+ applied to its
      # file, and narrowed to one configuration with +only+.
      #
      # :name :: the derived experiment's name (Experiment::NAME)
      # :changes :: Hash of dotted file key => value, e.g. "load.rate" => 850,
      #             "batches" => 1, "threads" => [1, 2, 4]; a nil value removes
      #             the key (back to its default) (default: {})
      # :only :: one of this experiment's Configs: the derived experiment
      #          holds that configuration alone (its ruby, server and app by
      #          excluding the others; its processes, threads and varying load
      #          and env values as single values), before +changes+ apply
      #          (default: nil: every configuration)
      #
      # The seed and batches are this experiment's (which the command line
      # may have changed from the file's) unless +changes+ set them. Its
      # gem sets are this experiment's (#gem_set_configurations). Relative
      # paths resolve against this experiment's base_dir. +parse_options+ go
      # to Experiment.parse (known_servers:, known_apps:). Raises ConfigError
      # when the result is not a valid experiment, naming the derived file.
      def derive(name:, changes: {}, only: nil, **parse_options)
        data = YAMLSource.load(source_text, Checker.new(source))
        data = Marshal.load(Marshal.dump(data)) # the parsed tree is edited below
        data["name"] = name
        data["seed"] = seed
        data["batches"] = batches
        narrow(data, only) if only
        changes.each { |key, value| set(data, key.to_s.split("."), value) }
        text = "# derived from experiment #{self.name} (#{source}) by rackbench\n#{YAML.dump(data).delete_prefix("---\n")}"
        Experiment.parse(text, source: "#{source} (derived: #{name})", base_dir: base_dir, **parse_options)
                  .sharing_gem_sets_with(self)
      end

      private

      # The configuration's own values for every dimension. The file's
      # excludes go: they named dimensions that are single values now, and
      # the configuration kept was not excluded.
      def narrow(data, config)
        raise ArgumentError, "#{config} is not a configuration of #{self.name}" unless configurations.include?(config)

        data.delete("exclude")
        excludes = []
        config.dims.each do |dim, value|
          case dim
          when "ruby", "server", "app"
            others = dimensions.fetch(dim) - [value]
            excludes << { dim => others } unless others.empty?
          when "processes", "threads", "proxy" then data[dim] = value
          when /\Aload\.(.+)\z/ then (data["load"] ||= {})[Regexp.last_match(1)] = value
          when /\Aenv\.(.+)\z/ then (data["env"] ||= {})[Regexp.last_match(1)] = value
          when /\Agem\.(.+)\z/ then data["gems"][Regexp.last_match(1)] = value # a dimension: gems is a mapping
          end
        end
        data["exclude"] = excludes unless excludes.empty?
      end

      def set(data, path, value)
        *parents, last = path
        node = parents.reduce(data) do |hash, key|
          hash[key] = {} unless hash[key].is_a?(Hash)
          hash[key]
        end
        value.nil? ? node.delete(last) : node[last] = value
      end
    end

    include Derive
  end
end
