# frozen_string_literal: true

module Rackbench
  class Report
    # What differs between configurations in the gems their servers loaded
    # (each trial's identity "gems": the bundle's gems as Gem.loaded_specs
    # reported them). Pure functions over ConfigSummary#gems.
    #
    # A difference is "explained" when a dimension that chooses gems tells
    # the two configurations apart: the app, the server (its own gems and
    # their requirements: Unicorn keeps Rack 2), or a gem.NAME dimension
    # (Rails 7.2 against 8.0 changes every Rails gem). Any other difference
    # (two rubies that resolved Rails on their own, `gems: per_ruby`) means
    # the comparison measures the gems too: the report flags it.
    module GemDifferences
      # The dimensions whose values choose the gems.
      EXPLAINING = %w[app server].freeze
      # How many differing gems a one-line text names before "and N more".
      SHOWN = 4

      module_function

      # The gems both +a+ and +b+ (name => version) hold at different
      # versions, by name: [[name, a's version, b's version]].
      def between(a, b)
        (a.keys & b.keys).sort.filter_map { |name| [name, a[name], b[name]] unless a[name] == b[name] }
      end

      # Whether a dimension that chooses gems differs between +dims_a+ and
      # +dims_b+.
      def explained?(dims_a, dims_b)
        (dims_a.keys | dims_b.keys).any? { |name| dims_a[name] != dims_b[name] && choosing?(name) }
      end

      # Whether the dimension +name+ chooses gems: the app, the server, a gem.NAME.
      def choosing?(name)
        EXPLAINING.include?(name) || name.start_with?(Experiment::Gems::DIMENSION_PREFIX)
      end

      # "rails 8.1.4.1 vs 7.2.4 (baseline), actionpack 8.1.4.1 vs 7.2.4 (baseline) and 3 more": the
      # differences of between(a, b) with how each side is named.
      def text(differences, a_name: nil, b_name: nil)
        parts = differences.first(SHOWN).map do |name, a, b|
          "#{name} #{a}#{" (#{a_name})" if a_name} vs #{b}#{" (#{b_name})" if b_name}"
        end
        more = differences.size > SHOWN ? " and #{differences.size - SHOWN} more" : ""
        "#{parts.join(", ")}#{more}"
      end

      # What differs between the configurations of each app: one entry per
      # group of gems whose versions split the app's configurations the
      # same way (the Rails gems move together), in the configurations'
      # order. Each entry:
      #
      #   {"app" => "rails-hello", "gems" => ["actionpack", "rails", ...],
      #    "versions" => [{"version" => "7.2.4", "configs" => [ids], "label" => "ruby"}, ...],
      #    "told_apart_by" => ["ruby"], "explained" => false}
      #
      # "label" names the versions' configurations by the values of the
      # dimensions that tell them apart ("told_apart_by"), else by their
      # count; "explained" says whether one of those chooses gems (see
      # explained?). Only gems two configurations or more hold count.
      def of(configs)
        configs.group_by { |config| config.dims["app"] }.flat_map do |app, members|
          groups(members).map { |versions, gems| entry(app, gems, versions, members) }
        end
      end

      # configs => {[[version, [configs]], ...] => [gem names]}.
      def groups(configs)
        names = configs.flat_map { |config| config.gems.keys }.uniq.sort
        names.each_with_object({}) do |name, groups|
          holders = configs.select { |config| config.gems.key?(name) }
          by_version = holders.group_by { |config| config.gems[name] }
          next if holders.size < 2 || by_version.size < 2

          (groups[by_version.to_a] ||= []) << name
        end
      end

      def entry(app, gems, versions, members)
        apart = told_apart_by(versions.map(&:last), members)
        { "app" => app, "gems" => gems,
          "versions" => versions.map do |version, configs|
            { "version" => version, "configs" => configs.map(&:id), "label" => label(configs, apart) }
          end,
          "told_apart_by" => apart,
          "explained" => apart.any? { |name| choosing?(name) } }
      end

      # The dimensions whose values never overlap between the groups (each
      # an Array of configurations): what sets them apart. Also read by
      # GemNotes.
      def told_apart_by(groups, members)
        names = members.flat_map { |config| config.dims.keys }.uniq
        names.select do |name|
          values = groups.map { |configs| configs.map { |config| config.dims[name] }.uniq }
          values.flatten(1).size == values.flatten(1).uniq.size && values.size > 1
        end
      end

      # The configurations named by the values of the dimensions +apart+
      # ("r33, r34"), else by their count.
      def label(configs, apart)
        return "#{configs.size} configuration#{"s" unless configs.size == 1}" if apart.empty?

        configs.map { |config| apart.map { |name| Report.format_dim(config.dims[name]) }.join(" · ") }.uniq.join(", ")
      end

      # One line of an entry: "rails, actionpack 7.2.4 (ruby) vs 8.1.4.1 (r34)".
      def line(entry)
        gems = entry["gems"]
        names = gems.size > SHOWN + 1 ? "#{gems.first(SHOWN).join(", ")} and #{gems.size - SHOWN} more" : gems.join(", ")
        "#{names} #{entry["versions"].map { |v| "#{v["version"]} (#{v["label"]})" }.join(" vs ")}"
      end

      private_class_method :groups, :entry
    end
  end
end
