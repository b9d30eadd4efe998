# frozen_string_literal: true

require "test_helper"
require "json"
require "stringio"

# The built-in apps' manifests (apps/*/app.yml) and `rackbench apps`.
describe Rackbench::Apps do
  let(:apps) { Rackbench::Apps.all }

  it "lists every app directory and every variant" do
    assert_equal %w[cable-rails cpu download errors io-wait long-list mix mix-users rack-hello rails-hello rails-posts
                    rails-posts-pg ws-rack], Rackbench::Apps.names
    assert_equal Rackbench::Apps.names, Rackbench::Experiment.builtin_apps
  end

  it "gives every app a description, a health path and a full check (status, content type, body)" do
    apps.each do |app|
      assert_kind_of String, app.description, app.name
      assert_match %r{\A/}, app.health, app.name
      assert_match %r{\A/}, app.load_path, app.name
      assert_equal 200, app.expect_status, app.name
      assert_match %r{\A[a-z]+/[a-z-]+\z}, app.expect_content_type, app.name
      refute_empty app.expect_body.to_s, app.name
      assert File.file?(File.join(app.dir, "config.ru")), app.name
      assert File.file?(File.join(app.dir, "Gemfile")), app.name
    end
  end

  it "carries an app entry's bundle_without to the App, nil when the entry has none" do
    spec = Rackbench::Experiment::AppSpec
    mine = spec.new(name: "mine", builtin: false, path: "/src/mine", env: {}, bundle_without: %w[test])
    assert_equal %w[test], Rackbench::App.resolve(mine).bundle_without
    assert_nil Rackbench::App.resolve(spec.new(name: "mine", builtin: false, path: "/src/mine", env: {})).bundle_without
    builtin = spec.new(name: "rack-hello", builtin: true, env: {}, bundle_without: [])
    assert_equal [], Rackbench::App.resolve(builtin).bundle_without
    assert_nil Rackbench::Apps.builtin("rack-hello").bundle_without
  end

  it "never uses the load path as the health path of an app that counts or waits" do
    %w[errors io-wait cpu download].each { |name| refute_equal Rackbench::Apps.builtin(name).load_path, Rackbench::Apps.builtin(name).health }
  end

  it "resolves setup scripts, request lists and variants to files of the app" do
    posts = Rackbench::Apps.builtin("rails-posts")
    mix = Rackbench::Apps.builtin("mix")
    assert_equal File.join(posts.dir, "setup.rb"), posts.setup
    assert_nil posts.requests
    assert_equal posts.dir, mix.dir
    assert_equal "rails-posts", mix.base
    assert_equal posts.setup, mix.setup
    assert_equal File.join(posts.dir, "mix.requests"), mix.requests
    assert_equal File.join(Rackbench::Apps.builtin("io-wait").dir, "setup.rb"), Rackbench::Apps.builtin("io-wait").setup
  end

  it "checks the mixes' sessions and no other app's" do
    assert_equal "Signed in as author7", Rackbench::Apps.builtin("mix").expect_session_body
    assert_equal "Signed in as author", Rackbench::Apps.builtin("mix-users").expect_session_body
    assert_equal %w[mix mix-users], apps.select(&:expect_session_body).map(&:name)
  end

  it "ships a mix with many users: one author per connection from users.csv, random posts, a probe per slot" do
    users = Rackbench::Apps.builtin("mix-users")
    text = File.read(users.requests)
    assert_match(/\A(#.*\n)*@users users\.csv\n/, text)
    csv = File.readlines(File.join(users.dir, "users.csv"), chomp: true)
    assert_equal "login,password", csv.first
    assert_equal (1..50).map { |i| "author#{i},secret" }, csv.drop(1)
    assert_includes text, "&user={{user.login:url}}&password={{user.password:url}}"
    assert_includes text, "GET /posts/{{random 1..1000}}"
    assert_match(%r{^--- probe name=whoami\n@expect status=200\n@expect body=Signed in as \{\{user\.login\}\}</p>\n}, text)
  end

  it "refuses an expect_session_body that is not one line of text" do
    [nil, "", "a\nb", 3].each do |bad|
      error = assert_raises(Rackbench::ConfigError) do
        Rackbench::Apps.send(:normalize, { "expect_session_body" => bad }, "/tmp", "apps/x/app.yml")
      end
      assert_equal "apps/x/app.yml: expect_session_body must be one line of text, got #{bad.inspect}", error.message
    end
  end

  it "allows errors its deliberate 5% and nobody else more than the runner's default" do
    assert_equal 0.1, Rackbench::Apps.builtin("errors").max_error_rate
    assert_equal ["errors"], apps.select(&:max_error_rate).map(&:name)
  end

  it "declares the apps that need CRuby and says why a JRuby trial cannot run them" do
    ruby_only = apps.select(&:engines).map(&:name)
    assert_equal %w[cable-rails io-wait long-list mix mix-users rails-hello rails-posts rails-posts-pg ws-rack], ruby_only
    assert_nil Rackbench::Apps.builtin("rails-posts").unsupported_reason("ruby")
    assert_equal "app rails-posts runs on ruby only (not jruby)",
                 Rackbench::Apps.builtin("rails-posts").unsupported_reason("jruby")
    assert_nil Rackbench::Apps.builtin("rack-hello").unsupported_reason("jruby")
  end

  it "names an unknown app and the known ones" do
    error = assert_raises(Rackbench::ConfigError) { Rackbench::Apps.builtin("rails-hallo") }
    assert_match(/unknown app 'rails-hallo'; built-in apps: cable-rails, cpu, download/, error.message)
  end

  it "keeps the mix's request list well formed: a form login first, then weighted reads and replies" do
    text = File.read(Rackbench::Apps.builtin("mix").requests)
    entries = text.scan(/^--- (.*)\n((?:@.*\n)*)([A-Z]+) (\S+)/)
    assert_equal [["first name=login-form", "@capture form_token form=authenticity_token\n", "GET", "/login"],
                  ["first name=login", "@follow\n@capture csrf_token meta=csrf-token\n", "POST", "/login"]],
                 entries.first(2)
    assert_includes text, "authenticity_token={{form_token:url}}&user=author7"
    assert(entries.drop(2).all? { |attrs, _, _, _| attrs.match?(/\Aweight=\d+ name=\S+\z/) })
    replies = entries.select { |_, _, method, path| "#{method} #{path}".match?(%r{\APOST /posts/\d+/replies\z}) }
    assert_equal 2, replies.size
    assert_equal 2, text.scan("authenticity_token={{csrf_token:url}}&body=").size
  end
end

describe "rackbench apps" do
  def run_cli(*argv) = cli("apps", *argv)

  it "prints a table of the apps, what each measures, its load and its check" do
    status, out, = run_cli("--wide") # every cell on one line
    assert_equal 0, status
    assert_match(/\| app +\| measures +\| load +\| check/, out)
    assert_match(%r{\| rails-posts +\| .*\| GET /posts +\| 200, text/html, "Post 1000}, out)
    assert_match(/\| mix +\| .*\| mix\.requests \(request list\)/, out)
    assert_match(%r{\| rails-posts-pg +\| .*\| GET /posts on postgresql +\|}, out)
  end

  it "fits the table within 100 columns when not writing to a terminal" do
    status, out, = run_cli
    assert_equal 0, status
    assert_operator out.lines.map { |line| Rackbench::Text::Wrap.width(line.chomp) }.max, :<=, 100
    assert_match(/\| rails-posts-pg +\| rails-posts on PostgreSQL: the same +\|/, out)
  end

  it "prints every app as JSON" do
    status, out, = run_cli("--json")
    assert_equal 0, status
    doc = JSON.parse(out)
    assert_equal Rackbench::Apps.names, doc.map { |app| app["name"] }
    cpu = doc.find { |app| app["name"] == "cpu" }
    assert_equal({ "status" => 200, "content_type" => "text/plain", "body" => "inside=840 checksum=69191200" },
                 cpu["check"])
    posts = doc.find { |app| app["name"] == "rails-posts" }
    assert_equal ["setup.rb", ["ruby"], "/up"], posts.values_at("setup", "engines", "health")
    assert_equal 0.1, doc.find { |app| app["name"] == "errors" }["max_error_rate"]
    assert_equal [[], ["postgresql"]], %w[rails-posts rails-posts-pg].map { |name| doc.find { |app| app["name"] == name }["services"] }
  end

  it "rejects an argument" do
    status, _, err = run_cli("extra")
    assert_equal 2, status
    assert_equal "rackbench: unexpected argument 'extra'\n", err
  end
end

# What Rack's SPEC asks of every response of the plain-Rack apps, checked
# without Rack (not in rackbench's own bundle): a status, a mutable Hash of
# lower-case String headers (servers add Content-Length or chunking to it),
# a body that yields Strings.
describe "the plain-Rack apps' responses" do
  %w[cpu/cpu_app download/download_app errors/errors_app io-wait/io_wait_app].each do |file|
    require_relative "../../apps/#{file}"
  end

  it "are mutable hashes of lower-case headers with a content type, and String bodies" do
    apps = { "cpu" => CpuApp.new, "download" => DownloadApp.new, "errors" => ErrorsApp.new,
             "io-wait" => IoWaitApp.new(sleeper: ->(_) {}) }
    apps.each do |name, app|
      ["/", "/up", "/nope", "/?mb=x&ms=x"].each do |target|
        path, query = target.split("?", 2)
        status, headers, body = app.call("PATH_INFO" => path, "QUERY_STRING" => query.to_s)
        where = "#{name} #{target}"
        assert_includes 200..599, status, where
        assert_instance_of Hash, headers, where
        refute headers.frozen?, "#{where}: frozen headers"
        assert(headers.keys.all? { |key| key == key.downcase }, where)
        assert headers.key?("content-type"), where
        body.each { |chunk| assert_kind_of String, chunk, where }
      end
    end
  end
end
