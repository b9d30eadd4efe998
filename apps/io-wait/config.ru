# frozen_string_literal: true

require_relative "io_wait_app"
require_relative "items_query"

run IoWaitApp.new(db: ItemsQuery.new(ItemsDb.path))
