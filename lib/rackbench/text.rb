# frozen_string_literal: true

module Rackbench
  # Text for a terminal that fits it: how wide the output may be
  # (Text::Width), a cell or a line wrapped or shortened to a width
  # (Text::Wrap), and tables laid out within a width (Text::Table). Every
  # view that prints a table or long lines (cache, report, compare, gate)
  # goes through these, so `--wide` means the same everywhere.
  module Text
    autoload :Table, File.expand_path("text/table", __dir__)
    autoload :Width, File.expand_path("text/width", __dir__)
    autoload :Wrap, File.expand_path("text/wrap", __dir__)
  end
end
