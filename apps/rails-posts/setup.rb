# frozen_string_literal: true

# Creates and seeds rails-posts' database before the server boots
# (rackbench runs this with the app's bundle, in the trial's directory; by
# hand: bundle exec ruby setup.rb). Written to a temporary file and renamed
# into place, so a server never sees a half-seeded database.
require "sqlite3"
require "fileutils"
require_relative "posts_db"

path = PostsDb.path
FileUtils.mkdir_p(File.dirname(path))
tmp = "#{path}.#{Process.pid}.tmp"
FileUtils.rm_f(tmp)
rows = PostsDb.rows
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
FileUtils.rm_f(["#{path}-wal", "#{path}-shm"])
File.rename(tmp, path)
puts "rails-posts: seeded #{PostsDb::AUTHORS} authors, #{PostsDb::POSTS} posts, #{PostsDb::REPLIES} replies in #{path}"
