# frozen_string_literal: true

require "fileutils"
require "minitest"
require "tmpdir"

# Every new results database a test makes starts as a copy of one this
# process migrated once (Store::Template): the tests create hundreds, and
# each would otherwise run every migration, about 25 ms of CPU
# (doc/performance.md, the unit tier's CPU). store_template_test.rb proves
# a copy is the database the migrations make; the migrations' own tests
# open databases of older versions, which the template never touches.
Rackbench::Test::STORE_TEMPLATE_DIR = Dir.mktmpdir("rackbench-store-template")
Rackbench::Store::Template.enable(Rackbench::Test::STORE_TEMPLATE_DIR)
Minitest.after_run { FileUtils.rm_rf(Rackbench::Test::STORE_TEMPLATE_DIR) }
