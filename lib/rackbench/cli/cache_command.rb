# frozen_string_literal: true

require "json"
require_relative "command"
require_relative "../cache_inventory"

module Rackbench
  module CLI
    # `rackbench cache`: what rackbench keeps between runs (rubies built
    # from source, Bundler environments and their gem directories,
    # downloaded sources), with sizes, last use and who uses it; `rackbench
    # cache prune` removes what is old or no stored experiment uses, never
    # what a running experiment holds (doc/cache.md).
    class CacheCommand < Command
      BANNER = "Usage: rackbench cache [--json] [--wide]\n       rackbench cache prune [--older-than DURATION] [--unused] [--dry-run] [--json]"

      def run(argv)
        prune = argv.first == "prune"
        argv = argv.drop(1) if prune
        options = {}
        rest = parse_options(argv, BANNER) do |p|
          p.separator "Lists #{CacheRoot.path} (RACKBENCH_CACHE); prune removes items that meet every condition given."
          p.on("--older-than DURATION", "prune: not used for this long (e.g. 30d, 12h)") { |v| options[:older_than_s] = age_s(v) }
          p.on("--unused", "prune: no results directory that used it still exists") { options[:unused] = true }
          p.on("--dry-run", "prune: say what would go, remove nothing") { options[:dry_run] = true }
          p.on("--json", "print JSON") { options[:json] = true }
          wide_option(p, options)
        end
        return CLI::EXIT_OK unless rest
        raise UsageError, "unexpected argument #{rest.first.inspect}\n#{BANNER}" unless rest.empty?
        if !prune && (options.keys - %i[json wide]).any?
          raise UsageError, "--older-than, --unused and --dry-run go with `rackbench cache prune`"
        end

        items = CacheInventory.new.items
        prune ? run_prune(items, options) : list(items, options)
        CLI::EXIT_OK
      end

      private

      # "30d", "12h", "90m", "45s": days are what a cache is pruned by.
      def age_s(text)
        match = text.match(/\A(\d+(?:\.\d+)?)(d|h|m|s)\z/) or raise UsageError, "--older-than: #{text.inspect} is not a duration such as 30d, 12h or 90m"
        match[1].to_f * { "d" => 86_400, "h" => 3600, "m" => 60, "s" => 1 }.fetch(match[2])
      end

      # The items as a table fitted to the output (what each is wrapped,
      # who used it shortened in the middle: the ends of a path tell it
      # apart), or whole with --wide or --json.
      def list(items, options)
        return @out.puts(JSON.pretty_generate(items.map(&:to_h))) if options[:json]

        rows = items.map do |i|
          [i.kind, i.name, Units.bytes(i.bytes), i.last_used&.strftime("%Y-%m-%d %H:%M") || "-",
           i.in_use ? "in use" : users_text(i)]
        end
        width = output_width(options)
        @out.puts Text::Table.new(headings: ["kind", "what", "size", "last used", "used by"], rows: rows, right: [2],
                                  shrink: { 3 => :fixed, 4 => :middle }, width: width).to_s
        @out.print Text::Wrap.prose("#{items.size} items, #{Units.bytes(items.sum(&:bytes))} in #{CacheRoot.path}\n", width)
      end

      def run_prune(items, options)
        prune = CacheInventory::Prune.new(items, older_than_s: options[:older_than_s], unused: options[:unused])
        decisions = options[:dry_run] ? prune.decisions : prune.run!
        if options[:json]
          @out.puts JSON.pretty_generate(decisions.map { |d| d.item.to_h.merge("removed" => d.remove && !options[:dry_run], "reason" => d.reason) })
          return
        end

        gone = decisions.select(&:remove)
        verb = options[:dry_run] ? "would remove" : "removed"
        gone.each { |d| @out.puts "#{verb} #{d.item.kind} #{d.item.name} (#{Units.bytes(d.item.bytes)}): #{d.reason}" }
        held = decisions.select { |d| !d.remove && d.reason.start_with?("in use") }
        held.each { |d| @out.puts "kept #{d.item.kind} #{d.item.name}: #{d.reason}" }
        @out.puts "#{verb} #{gone.size} of #{decisions.size} items, #{Units.bytes(gone.sum { |d| d.item.bytes })}" \
                  "#{"; #{held.size} in use kept" unless held.empty?}"
      end

      def users_text(item)
        return "-" if item.users.empty?

        "#{item.users.first}#{" +#{item.users.size - 1}" if item.users.size > 1}"
      end
    end
  end
end
