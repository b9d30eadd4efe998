# frozen_string_literal: true

require "yaml"

module Rackbench
  class Experiment
    # Turns the text of an experiment file into plain Ruby data (Hash,
    # Array, String, Integer, Float, true/false, nil) or one ConfigError.
    #
    # YAML.safe_load with no extra classes and no aliases: an experiment
    # file is configuration, never objects. Before that, the document tree
    # is walked once for what safe_load lets through silently: a key given
    # twice in one mapping (YAML keeps the last, so the first setting would
    # vanish without a word).
    module YAMLSource
      module_function

      # Returns the top-level Hash; +checker+ names the file in errors.
      def load(text, checker)
        tree = parse_tree(text, checker)
        check_tree(tree.root, nil, checker) if tree&.root
        data = safe_load(text, checker)
        checker.fail!(nil, "empty experiment file (expected at least name:, servers: and apps:)") if data.nil?
        checker.fail!(nil, "must be a mapping of keys (name:, servers:, ...), got a #{data.class.name.downcase}") unless data.is_a?(Hash)
        data
      end

      # Collects the line of the last parser event: libyaml reports some
      # errors (a bad indentation) at the start of the enclosing mapping,
      # which may be far above the actual mistake.
      class LineTracker < Psych::TreeBuilder
        attr_reader :last_line

        def event_location(start_line, start_column, end_line, end_column)
          @last_line = end_line + 1
          super
        end
      end

      def parse_tree(text, checker)
        builder = LineTracker.new
        Psych::Parser.new(builder).parse(text, checker.source)
        documents = builder.root.children
        checker.fail!(nil, "holds #{documents.size} YAML documents (---); an experiment is one") if documents.size > 1
        documents.first
      rescue Psych::SyntaxError => e
        line = [e.line, builder.last_line].compact.max
        message = [e.problem, e.context].compact.join(" ")
        checker.fail!(nil, "invalid YAML at line #{line}: #{message}")
      end

      def check_tree(node, key, checker)
        case node
        when Psych::Nodes::Alias
          checker.fail!(key, "YAML aliases (*#{node.anchor}) are not allowed, at line #{node.start_line + 1}")
        when Psych::Nodes::Mapping
          check_mapping(node, key, checker)
        when Psych::Nodes::Sequence
          node.children.each_with_index { |child, i| check_tree(child, "#{key}[#{i}]", checker) }
        end
      end

      def check_mapping(node, key, checker)
        seen = {}
        node.children.each_slice(2) do |name_node, value_node|
          name = name_node.is_a?(Psych::Nodes::Scalar) ? name_node.value : "?"
          path = checker.join(key, name)
          line = name_node.start_line + 1
          checker.fail!(path, "duplicate key at line #{line} (first at line #{seen[name]})") if seen.key?(name)
          seen[name] = line
          check_tree(value_node, path, checker)
        end
      end

      def safe_load(text, checker)
        YAML.safe_load(text, permitted_classes: [], permitted_symbols: [], aliases: false, filename: checker.source)
      rescue Psych::DisallowedClass => e
        checker.fail!(nil, "invalid YAML: #{e.message.sub(/\ATried to load unspecified class: /, "unsupported value of type ")} " \
                           "(quote it to make it a string)")
      rescue Psych::Exception => e
        checker.fail!(nil, "invalid YAML: #{e.message}")
      end
    end
  end
end
