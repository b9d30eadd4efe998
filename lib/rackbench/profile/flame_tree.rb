# frozen_string_literal: true

module Rackbench
  module Profile
    # A profile's stacks as a tree of calls, the data of a flame graph
    # (HtmlReport::Charts::Flame): one node per distinct path from the
    # outermost frame, its samples the samples whose stack goes through it.
    # Small subtrees are folded away so a chart of a long profile stays a
    # few thousand rectangles.
    module FlameTree
      ROOT_NAME = "all"

      module_function

      # Array of nodes { "id", "parent" (nil for the root), "name", "file",
      # "self", "total", "value" } (samples), the root first, parents
      # before children. A node with fewer than min_share of all samples is
      # left out with its subtree; its samples are added to its parent's
      # "value" (what the chart sums: the node's own samples plus those
      # folded into it), so every width stays true.
      def nodes(profile, min_share: 0.002)
        root = { children: {}, total: 0, self: 0 }
        profile.stacks.each do |stack, count|
          node = root
          node[:total] += count
          stack.each do |frame|
            node = (node[:children][frame] ||= { children: {}, total: 0, self: 0 })
            node[:total] += count
          end
          node[:self] += count
        end
        min_samples = root[:total] * min_share
        out = []
        walk(profile, root, nil, ROOT_NAME, nil, min_samples, out)
        out
      end

      def walk(profile, node, parent, name, file, min_samples, out)
        id = out.size
        entry = { "id" => id, "parent" => parent, "name" => name, "file" => file, "self" => node[:self],
                  "total" => node[:total], "value" => node[:self] }
        out << entry
        node[:children].sort_by { |frame, child| [-child[:total], frame] }.each do |frame, child|
          if child[:total] < min_samples
            entry["value"] += child[:total]
            next
          end

          info = profile.frames[frame]
          walk(profile, child, id, info["name"], info["file"], min_samples, out)
        end
      end
    end
  end
end
