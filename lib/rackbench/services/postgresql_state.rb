# frozen_string_literal: true

module Rackbench
  module Services
    # The state of a PostgreSQL database that rackbench compares before
    # each trial with its template's: the exact row count of every table
    # (count(*), not the planner's estimate), read in one statement.
    module PostgresqlState
      # One line per table, "schema.table<TAB>rows", in name order. Each
      # count runs through query_to_xml, so one statement counts tables it
      # only learns the names of as it runs; format's %I quotes the names.
      QUERY = <<~SQL.tr("\n", " ").strip
        SELECT n.nspname || '.' || c.relname || E'\\t' ||
               (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.%I', n.nspname, c.relname),
                                                    false, true, '')))[1]::text
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
          AND n.nspname NOT LIKE 'pg_toast%'
        ORDER BY 1
      SQL

      module_function

      # The state from QUERY's output: { "tables" => count, "rows" => total,
      # "rows_by_table" => { "public.posts" => 1000, ... } }.
      def parse(output)
        counts = output.to_s.each_line.filter_map do |line|
          name, rows = line.chomp.split("\t").map(&:strip).reject(&:empty?)
          [name, Integer(rows)] if name && rows
        end.to_h
        { "tables" => counts.size, "rows" => counts.values.sum, "rows_by_table" => counts }
      end

      # How state differs from template (both from parse), in one line, or
      # nil when they are equal.
      def difference(template, state)
        tables = (template["rows_by_table"].keys | state["rows_by_table"].keys).sort
        changed = tables.find { |table| template["rows_by_table"][table] != state["rows_by_table"][table] }
        return nil unless changed

        "#{changed} holds #{state["rows_by_table"][changed] || "no table"} rows, the template " \
          "#{template["rows_by_table"][changed] || "no table"}"
      end
    end
  end
end
