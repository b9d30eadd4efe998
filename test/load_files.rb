# frozen_string_literal: true

# Runs several test files in one ruby, as a lane of the unit tier does:
# the files named before "--", minitest's own arguments after it (rake's
# TestTask loader does the same for its one process).
split = ARGV.index("--") || ARGV.size
files = ARGV[0...split]
ARGV.replace(ARGV.drop(split + 1))
files.each { |file| require File.expand_path(file) }
