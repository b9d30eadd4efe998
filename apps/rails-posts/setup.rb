# frozen_string_literal: true

# Creates and seeds rails-posts' database before the server boots
# (rackbench runs this with the app's bundle; by hand: bundle exec ruby
# setup.rb). Without DATABASE_URL, an SQLite file in the trial's directory,
# written whole before it is renamed into place (TrialFile.write_atomically).
# With a PostgreSQL DATABASE_URL (rails-posts-pg), the same rows in that
# database, in one transaction: rackbench runs it once and keeps the result
# as the template every trial starts from.
require_relative "posts_db"

rows = PostsDb.rows
if PostsDb.postgresql?
  require "pg"
  connection = PG.connect(ENV.fetch("DATABASE_URL"))
  connection.exec("SET client_min_messages = warning") # DROP TABLE IF EXISTS's notices
  connection.transaction do |db|
    db.exec(PostsDb::PG_SCHEMA)
    PostsDb::COLUMNS.each do |table, columns|
      db.prepare("insert_#{table}", "INSERT INTO #{table} VALUES (#{(1..columns).map { |i| "$#{i}" }.join(", ")})")
      rows.fetch(table).each { |row| db.exec_prepared("insert_#{table}", row) }
      # The next id after the seeded ones (a reply posted during a trial).
      db.exec("SELECT setval(pg_get_serial_sequence('#{table}', 'id'), (SELECT max(id) FROM #{table}))")
    end
  end
  connection.exec("ANALYZE #{PostsDb::COLUMNS.keys.join(", ")}") # the planner knows the rows
  connection.close
  where = "PostgreSQL (#{ENV["DATABASE_URL"]})"
else
  require "sqlite3"
  where = PostsDb.path
  TrialFile.write_atomically(where) do |tmp|
    db = SQLite3::Database.new(tmp)
    db.execute_batch(PostsDb::SCHEMA)
    db.transaction do
      PostsDb::COLUMNS.each do |table, columns|
        statement = db.prepare("INSERT INTO #{table} VALUES (#{Array.new(columns, "?").join(", ")})")
        rows.fetch(table).each { |row| statement.execute(row) }
        statement.close
      end
    end
    db.close
  end
end
puts "rails-posts: seeded #{PostsDb::AUTHORS} authors, #{PostsDb::POSTS} posts, #{PostsDb::REPLIES} replies in #{where}"
