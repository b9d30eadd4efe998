# frozen_string_literal: true

require_relative "../shared/trial_file"

# rails-posts' SQLite database: where it lives, its schema, and its
# deterministic content. setup.rb creates it with the sqlite3 gem alone
# (no Rails boot, so it takes a fraction of a second); the app reads and
# writes it through ActiveRecord (config/database.yml).
module PostsDb
  FILE_NAME = "rails-posts.sqlite3"
  SEED = 20_261_122
  AUTHORS = 50
  POSTS = 1000
  REPLIES = 3000
  # Every author logs in with this password: the benchmark measures pages,
  # not password hashing.
  PASSWORD = "secret"
  # Post i is published BASE_TIME + i hours: the newest post is number POSTS.
  BASE_TIME = Time.utc(2026, 1, 1)
  WORDS = %w[ruby rack rails puma fiber thread process socket latency throughput request response cache
             memory garbage collector yjit benchmark server client worker queue pool batch median
             percentile warmup kernel page cookie session template partial render query index].freeze

  SCHEMA = <<~SQL
    CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, email TEXT NOT NULL,
                          created_at datetime(6) NOT NULL, updated_at datetime(6) NOT NULL);
    CREATE TABLE posts (id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL REFERENCES authors (id),
                        title TEXT NOT NULL, body TEXT NOT NULL, published_at datetime(6) NOT NULL,
                        replies_count INTEGER NOT NULL DEFAULT 0,
                        created_at datetime(6) NOT NULL, updated_at datetime(6) NOT NULL);
    CREATE INDEX index_posts_on_published_at ON posts (published_at);
    CREATE INDEX index_posts_on_author_id ON posts (author_id);
    CREATE TABLE replies (id INTEGER PRIMARY KEY, post_id INTEGER NOT NULL REFERENCES posts (id),
                          author_id INTEGER NOT NULL REFERENCES authors (id), body TEXT NOT NULL,
                          created_at datetime(6) NOT NULL, updated_at datetime(6) NOT NULL);
    CREATE INDEX index_replies_on_post_id ON replies (post_id);
  SQL

  module_function

  # In the trial's directory (TrialFile.path), so replies written during a
  # trial touch only that trial's copy.
  def path(env = ENV)
    TrialFile.path(FILE_NAME, "rails-posts", env)
  end

  def author_name(id)
    "author#{id}"
  end

  # Rows of the seeded database: { authors: [...], posts: [...], replies:
  # [...] }, each row an Array in the column order of SCHEMA. The same on
  # every run and every platform (one Random with a fixed seed, drawn in a
  # fixed order).
  def rows
    rng = Random.new(SEED)
    stamp = ->(hours) { (BASE_TIME + hours * 3600).strftime("%Y-%m-%d %H:%M:%S") }
    authors = (1..AUTHORS).map { |id| [id, author_name(id), "#{author_name(id)}@example.com", stamp[0], stamp[0]] }
    posts = (1..POSTS).map do |id|
      title = "Post #{id}: #{words(rng, 4).join(" ")}"
      body = Array.new(3) { "#{words(rng, 12).join(" ").capitalize}." }.join(" ")
      [id, rng.rand(1..AUTHORS), title, body, stamp[id], 0, stamp[id], stamp[id]]
    end
    replies = (1..REPLIES).map do |id|
      post = posts[rng.rand(POSTS)]
      post[5] += 1 # replies_count, the counter cache
      [id, post[0], rng.rand(1..AUTHORS), "#{words(rng, 8).join(" ").capitalize}.", stamp[POSTS + id],
       stamp[POSTS + id]]
    end
    { authors: authors, posts: posts, replies: replies }
  end

  def words(rng, count)
    Array.new(count) { WORDS[rng.rand(WORDS.size)] }
  end

  # The title of post id as seeded (for checks).
  def title(id)
    rows[:posts].fetch(id - 1)[2]
  end
end
