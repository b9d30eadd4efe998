# frozen_string_literal: true

require_relative "../shared/trial_file"

# The SQLite database of io-wait's /db path: where it lives, how it is
# seeded, and the query /db runs. Seeded deterministically (values are a
# function of the row number), so every trial's copy is the same and the
# query results can be checked.
module ItemsDb
  ROWS = 100_000
  CATEGORIES = 100
  FILE_NAME = "io-wait.sqlite3"
  # A scan of the whole table (no index on category): ~1-3 ms of SQLite
  # work, during which Extralite has released the GVL.
  QUERY = "SELECT count(*), sum(value) FROM items WHERE category = ?"

  module_function

  # In the trial's directory (TrialFile.path).
  def path(env = ENV)
    TrialFile.path(FILE_NAME, "io-wait", env)
  end

  # The value and category of row id (1-based): fixed functions, no RNG.
  def value(id)
    (id * 7919) % 1000
  end

  def category(id)
    (id * 31) % CATEGORIES
  end

  # What QUERY returns for category: [count, sum], computed without SQLite.
  def expected(category)
    expected_by_category.fetch(category, [0, 0])
  end

  # [count, sum] of every category, from one pass over the rows, made
  # once: a check of every category (the io-wait tests ask for all 100)
  # would otherwise pass over the 100,000 rows once each.
  def expected_by_category
    @expected_by_category ||= (1..ROWS).each_with_object({}) do |id, found|
      count, sum = found.fetch(category(id), [0, 0])
      found[category(id)] = [count + 1, sum + value(id)]
    end.transform_values(&:freeze).freeze
  end

  # The category query number i of a request asks for.
  def category_of_query(i)
    (i * 37) % CATEGORIES
  end
end
