# frozen_string_literal: true

require "test_helper"
require "digest"
require "json"
require "yaml"
require_relative "../../apps/rails-posts/posts_db"

# rails-posts' seed data, without Rails (the app itself boots in
# test/integration/apps_test.rb, in its own bundle).
describe "apps/rails-posts seed" do
  # Pinned, so a change of seed, generator or Ruby's Random shows up here
  # rather than as a silent change of what rails-posts renders.
  it "is the same on every run and every machine" do
    assert_equal "f8b30e92fe304437603d9f45a3de3d8c2892c75025dd3d800479cfbb8d842b65",
                 Digest::SHA256.hexdigest(JSON.generate(PostsDb.rows))
  end

  it "has the documented size and a consistent reply counter cache" do
    rows = PostsDb.rows
    assert_equal [50, 1000, 3000], rows.values_at(:authors, :posts, :replies).map(&:size)
    counts = rows[:replies].group_by { |reply| reply[1] }.transform_values(&:size)
    assert(rows[:posts].all? { |post| post[5] == counts.fetch(post[0], 0) })
    assert(rows[:posts].all? { |post| post[1].between?(1, 50) })
  end

  it "makes post 1000 the newest: the one the app check looks for" do
    newest = PostsDb.rows[:posts].max_by { |post| post[4] }
    assert_equal 1000, newest[0]
    manifest = YAML.safe_load(File.read(File.expand_path("../../apps/rails-posts/app.yml", __dir__)))
    assert_equal PostsDb.title(1000), manifest["expect_body"]
  end

  it "logs in the mix's user" do
    mix = File.read(File.expand_path("../../apps/rails-posts/mix.requests", __dir__))
    user = mix[/user=(\w+)&password=(\w+)/, 1]
    assert_includes PostsDb.rows[:authors].map { |author| author[1] }, user
    assert_equal PostsDb::PASSWORD, mix[/password=(\w+)/, 1]
  end

  it "lives in the trial's directory when the runner gives one" do
    assert_equal "/trial/rails-posts.sqlite3", PostsDb.path("RACKBENCH_TRIAL_DIR" => "/trial")
  end
end
