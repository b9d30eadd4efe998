# frozen_string_literal: true

# Creates and seeds rails-posts' database before the server boots
# (rackbench runs this with the app's bundle, in the trial's directory; by
# hand: bundle exec ruby setup.rb). Written whole before it is renamed into
# place (TrialFile.write_atomically).
require "sqlite3"
require_relative "posts_db"

path = PostsDb.path
rows = PostsDb.rows
TrialFile.write_atomically(path) do |tmp|
  db = SQLite3::Database.new(tmp)
  db.execute_batch(PostsDb::SCHEMA)
  db.transaction do
    { authors: 5, posts: 8, replies: 6 }.each do |table, columns|
      statement = db.prepare("INSERT INTO #{table} VALUES (#{Array.new(columns, "?").join(", ")})")
      rows.fetch(table).each { |row| statement.execute(row) }
      statement.close
    end
  end
  db.close
end
puts "rails-posts: seeded #{PostsDb::AUTHORS} authors, #{PostsDb::POSTS} posts, #{PostsDb::REPLIES} replies in #{path}"
