# frozen_string_literal: true

require "fileutils"

module Rackbench
  class CacheInventory
    # What `rackbench cache prune` removes, and why the rest stays. The
    # conditions given must all hold for an item to go:
    # - older_than_s: not used for that long;
    # - unused: no results directory that used it still exists (a gem
    #   directory: no environment installs into it any more; a downloaded
    #   source: no build was made from it).
    # An item a running process holds is never removed, whatever the
    # conditions; it is taken exclusively while it goes, so a run that
    # starts meanwhile waits rather than finds it half removed. What a
    # build that stopped left is removed whenever nobody holds it.
    class Prune
      # item :: the Item; remove :: true when it goes; reason :: why it goes or stays
      Decision = Struct.new(:item, :remove, :reason, keyword_init: true)

      def initialize(items, older_than_s: nil, unused: false, now: Time.now)
        raise UsageError, "prune needs --older-than DURATION or --unused (or both)" unless older_than_s || unused

        @items = items
        @older_than_s = older_than_s
        @unused = unused
        @now = now
      end

      # A Decision per item, in the inventory's order.
      def decisions
        @decisions ||= begin
          removed = []
          @items.map do |item|
            decide(item, removed).tap { |d| removed << item if d.remove }
          end
        end
      end

      # Removes what #decisions says; returns the decisions, an item found
      # in use at the last moment marked kept.
      def run!
        decisions.map do |decision|
          next decision unless decision.remove

          outcome = remove(decision.item)
          outcome == :in_use ? decision.dup.tap { |d| d.remove = false; d.reason = "in use by a running process" } : decision
        end
      end

      private

      def decide(item, removed)
        return keep(item, "in use by a running process") if item.in_use
        return drop(item, "left by a build that stopped") if item.kind == "leftover"

        reasons = []
        if @older_than_s
          age_s = item.last_used ? @now - item.last_used : Float::INFINITY
          return keep(item, "used #{ago(age_s)} ago") if age_s < @older_than_s

          reasons << "unused for #{ago(age_s)}"
        end
        if @unused
          why = unused_reason(item, removed)
          return keep(item, used_text(item)) unless why

          reasons << why
        end
        drop(item, reasons.join(", "))
      end

      def unused_reason(item, removed)
        case item.kind
        when "gems"
          left = @items.select { |i| i.kind == "environment" && i.gem_dir == item.paths.first } - removed
          left.empty? ? "no environment installs into it" : nil
        when "ccache", "bundled", "agent" then nil
        when "source"
          builds = @items.select { |i| i.kind == "build" } - removed
          builds.any? { |b| b.name.include?(File.basename(item.paths.first)) } ? nil : "no kept build was made from it"
        else
          item.users.empty? ? "no stored experiment uses it" : nil
        end
      end

      def used_text(item)
        case item.kind
        when "gems" then "environments install into it"
        when "source" then "a kept build was made from it"
        when "ccache", "bundled", "agent" then "kept by --unused (prune it with --older-than)"
        else "used by #{item.users.first}#{" and #{item.users.size - 1} more" if item.users.size > 1}"
        end
      end

      def remove(item)
        return FileUtils.rm_rf(item.paths) && :removed unless item.lock_path

        CacheUse.exclusively(item.lock_path) do
          FileUtils.rm_rf(item.paths)
          :removed
        end
      end

      def keep(item, reason) = Decision.new(item: item, remove: false, reason: reason)
      def drop(item, reason) = Decision.new(item: item, remove: true, reason: reason)

      def ago(seconds)
        return "never" if seconds.infinite?

        days = seconds / 86_400
        days >= 1 ? "#{days.floor} d" : BundleEnv::Progress.duration(seconds)
      end
    end
  end
end
