# frozen_string_literal: true

require "extralite"
require_relative "items_db"

# The /db queries: one read-only Extralite connection per thread (a
# connection must not be shared between threads that run at once), opened
# on first use, so that it is also opened after a forking server forked.
class ItemsQuery
  def initialize(path)
    raise "io-wait: no database at #{path}: run setup.rb first (bundle exec ruby setup.rb)" unless File.file?(path)

    @path = path
    @key = :"io_wait_db_#{object_id}"
  end

  # [count, sum] of query number i of a request.
  def query(i)
    connection.query_array(ItemsDb::QUERY, ItemsDb.category_of_query(i)).first
  end

  private

  def connection
    # A thread variable, not Thread#[] (fiber-local): under a fiber server
    # every request runs in a fiber of its own.
    Thread.current.thread_variable_get(@key) ||
      Thread.current.thread_variable_set(@key, Extralite::Database.new(@path, read_only: true))
  end
end
