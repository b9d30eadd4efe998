# frozen_string_literal: true

module Rackbench
  class Report
    # A differential flame graph's data: two sides' trees of calls (path
    # => amount per request: CallTree#paths for callgrind's instructions,
    # ProfileDiff's for a profile's samples) set one against the other,
    # path by path. Laid out as B's icicle (Brendan Gregg's differential
    # flame graphs draw the profile after the change), each node as wide as
    # B's amount under it and carrying A's amount too, so a view colours
    # it by the difference. A path only A has has no width in B's layout:
    # the diff's rows list it.
    module FlameDiff
      module_function

      # Array of nodes {"id", "parent" (nil for the root), "name", "object"
      # (what the key says besides the name: an object file, a source
      # file), "depth", "x0", "x1" (in B's amount from the left), "a", "b",
      # "delta" (b - a)}, the root first, parents before children, the
      # widest child first. +label+ turns a key into [name, object].
      def nodes(a_paths, b_paths, label:)
        children = Hash.new { |hash, key| hash[key] = [] }
        b_paths.each_key { |path| children[path[0...-1]] << path unless path.empty? }
        out = []
        walk([], nil, 0.0, a_paths, b_paths, children, label, out)
        out
      end

      def walk(path, parent, x0, a_paths, b_paths, children, label, out)
        b = b_paths.fetch(path, 0.0)
        a = a_paths.fetch(path, 0.0)
        name, object = path.empty? ? ["all", nil] : label.call(path.last)
        id = out.size
        out << { "id" => id, "parent" => parent, "name" => name, "object" => object, "depth" => path.size,
                 "x0" => x0, "x1" => x0 + b, "a" => a, "b" => b, "delta" => b - a }
        x = x0
        children[path].sort_by { |child| [-b_paths[child], child.last.to_s] }.each do |child|
          walk(child, id, x, a_paths, b_paths, children, label, out)
          x += b_paths[child]
        end
      end
    end
  end
end
