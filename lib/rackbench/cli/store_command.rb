# frozen_string_literal: true

require "json"
require_relative "command"

module Rackbench
  module CLI
    # `rackbench store copy FROM TO` and `rackbench store migrate TARGET`:
    # moving results between stores (a results directory's SQLite file into
    # a PostgreSQL database a fleet shares: Store::Copy), and upgrading a
    # shared database's schema on purpose (workers never do: Schema.migrate!).
    class StoreCommand < Command
      USAGE = <<~TEXT
        Usage: rackbench store copy FROM TO
               rackbench store migrate TARGET

        FROM, TO and TARGET: a results directory (its results.db) or a database URL
        (postgres://USER@HOST:PORT/DATABASE, sqlite://PATH).

          copy      copy every experiment of FROM, with its runs, trials and earlier attempts, into TO
                    (again: only what TO lacks)
          migrate   create or upgrade TARGET's schema to this rackbench's (workers of a fleet never do)
      TEXT

      def run(argv)
        options = {}
        rest = parse_options(argv, USAGE) do |p|
          p.on("--json", "print what was done as JSON") { options[:json] = true }
        end
        return CLI::EXIT_OK unless rest

        action, *args = rest
        case action
        when "copy" then copy(args, options)
        when "migrate" then migrate(args, options)
        else raise UsageError, "store takes copy or migrate (see rackbench store --help)"
        end
      end

      private

      def copy(args, options)
        raise UsageError, "store copy takes FROM and TO (see rackbench store --help)" unless args.size == 2

        from, to = args
        unless Store::Connection.scheme(from) != :directory || File.exist?(File.join(from, Store::Connection::DB_FILE))
          raise UsageError, "no results in #{from} (a results directory holds results.db)"
        end
        copied = Store.open(from) { |source| Store.open(to) { |target| [target.location, Store::Copy.new(source, target).run] } }
        print_copy(*copied, options)
        CLI::EXIT_OK
      end

      def print_copy(location, copied, options)
        if options[:json]
          @out.puts JSON.pretty_generate(copied.map { |c| c.to_h.transform_keys(&:to_s) })
          return
        end
        copied.each do |c|
          @out.puts "#{c.name}: #{c.trials} trials, #{c.earlier_attempts} earlier attempts, #{c.runs} runs " \
                    "#{c.new_experiment ? "copied" : "added to the copy already there"} (id #{c.id})"
        end
        @out.puts "#{copied.size} experiment(s) in #{location}"
      end

      def migrate(args, options)
        raise UsageError, "store migrate takes one TARGET (see rackbench store --help)" unless args.size == 1

        location = Store.open(args.first, &:location)
        version = Store::Schema::VERSION
        options[:json] ? @out.puts(JSON.generate("store" => location, "schema_version" => version)) : @out.puts("#{location}: results schema version #{version}")
        CLI::EXIT_OK
      end
    end
  end
end
