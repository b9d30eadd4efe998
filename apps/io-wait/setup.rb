# frozen_string_literal: true

# Creates and seeds io-wait's database before the server boots (rackbench
# runs this with the app's bundle; by hand: bundle exec ruby setup.rb).
require "extralite"
require_relative "items_db"

path = ItemsDb.path
TrialFile.write_atomically(path) do |tmp|
  db = Extralite::Database.new(tmp)
  db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, category INTEGER NOT NULL, value INTEGER NOT NULL)")
  db.transaction do
    (1..ItemsDb::ROWS).each_slice(1000) do |ids|
      db.batch_execute("INSERT INTO items (id, category, value) VALUES (?, ?, ?)",
                       ids.map { |id| [id, ItemsDb.category(id), ItemsDb.value(id)] })
    end
  end
  db.close
end
puts "io-wait: seeded #{ItemsDb::ROWS} items in #{path}"
