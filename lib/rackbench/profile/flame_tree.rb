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
      # "depth" (0 for the root), "x0", "x1" (where it starts and ends, in
      # samples from the left), "self", "total", "value" } (samples), the
      # root first, parents
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
        walk(profile, root, { parent: nil, name: ROOT_NAME, file: nil, depth: 0, x0: 0 }, min_samples, out)
        out
      end

      # Adds node and its kept descendants to out. Its children are laid
      # out left to right from its own x0, the heaviest first, each as wide
      # as its total: an icicle's layout, in samples.
      def walk(profile, node, at, min_samples, out)
        id = out.size
        entry = { "id" => id, "parent" => at[:parent], "name" => at[:name], "file" => at[:file],
                  "depth" => at[:depth], "x0" => at[:x0], "x1" => at[:x0] + node[:total], "self" => node[:self],
                  "total" => node[:total], "value" => node[:self] }
        out << entry
        x0 = at[:x0]
        node[:children].sort_by { |frame, child| [-child[:total], frame] }.each do |frame, child|
          if child[:total] < min_samples
            entry["value"] += child[:total]
            next
          end

          info = profile.frames[frame]
          walk(profile, child, { parent: id, name: info["name"], file: info["file"], depth: at[:depth] + 1, x0: x0 },
               min_samples, out)
          x0 += child[:total]
        end
      end
    end
  end
end
