# frozen_string_literal: true

require "test_helper"
require "csv"
require "json"
require_relative "../support/report_store"

# What the report says about the gems the servers loaded: the differences
# between configurations beside what ran, in every view, and the
# gems_differ flag on comparisons no gem-choosing dimension explains
# (rubies that each resolved their own Rails), never on those one does
# (a gem.rails dimension, another server).
describe "the gems in the report" do
  let(:dir) { Dir.mktmpdir("rackbench-report-gems") }
  after { FileUtils.rm_rf(dir) }

  RAILS_72 = { "actionpack" => "7.2.4", "railties" => "7.2.4", "rack" => "3.1.8", "puma" => "6.6.1" }.freeze
  RAILS_81 = { "actionpack" => "8.1.4.1", "railties" => "8.1.4.1", "rack" => "3.2.4", "puma" => "6.6.1" }.freeze

  def dims(ruby, extra = {})
    { "ruby" => ruby, "server" => "puma", "app" => "rails-hello", "processes" => 1, "threads" => 1 }.merge(extra)
  end

  # configs :: dims => gems every batch loaded (a Proc: batch => gems)
  def report(configs, **options)
    Rackbench::Store.open(Dir.mktmpdir("store", dir)) do |store|
      rates = configs.keys.to_h { |d| [d, [1000, 1010, 990, 1005, 995]] }
      gems = ->(d, batch) { configs[d].respond_to?(:call) ? configs[d].call(batch) : configs[d] }
      ReportStore.fill(store, rates, fields: lambda { |d, batch, _|
        { identity: { "gems" => gems.call(d, batch) }, gem_versions: gems.call(d, batch).merge("bundler" => "2.6.9") }
      })
      Rackbench::Report.new(store, **options)
    end
  end

  let(:per_ruby) { report({ dims("ruby") => RAILS_72, dims("r34") => RAILS_81 }) }

  it "lists the gems that differ, grouped, with the dimension that tells them apart, and flags the comparison" do
    entries = per_ruby.gem_differences
    assert_equal [%w[actionpack railties], %w[rack]], entries.map { |e| e["gems"] }
    rails = entries.first
    assert_equal [["7.2.4", "ruby"], ["8.1.4.1", "r34"]], rails["versions"].map { |v| v.values_at("version", "label") }
    assert_equal ["ruby"], rails["told_apart_by"]
    refute rails["explained"]
    r34 = per_ruby.configs.last
    flag = r34.flags.find { |f| f["kind"] == "gems_differ" }
    assert_equal %w[actionpack rack railties], flag["gems"]
    assert_equal "its servers loaded other gems than the baseline's (ruby), and no gem is a dimension here: " \
                 "actionpack 8.1.4.1 vs 7.2.4 (baseline), rack 3.2.4 vs 3.1.8 (baseline), " \
                 "railties 8.1.4.1 vs 7.2.4 (baseline)", flag["message"]
    assert_empty per_ruby.configs.first.flags.select { |f| f["kind"] == "gems_differ" }, "the baseline itself"
    assert_equal({ "actionpack" => "8.1.4.1", "railties" => "8.1.4.1", "rack" => "3.2.4" }, r34.to_h["differing_gems"])
    assert_equal RAILS_81, r34.to_h["gems"]
  end

  it "shows them in the terminal, JSON, CSV and HTML" do
    text = per_ruby.terminal_table
    assert_includes text, "Gems that differ between configurations (as their servers loaded them):\n" \
                          "  rails-hello: actionpack, railties 7.2.4 (ruby) vs 8.1.4.1 (r34) [g: not a dimension of the experiment]\n" \
                          "  rails-hello: rack 3.1.8 (ruby) vs 3.2.4 (r34) [g: not a dimension of the experiment]"
    assert_match(/^Flags \(.*, g gems differ\):$/, text)
    assert_match(/^  r34: its servers loaded other gems than the baseline's \(ruby\)/, text)
    assert_equal "g", text.lines.grep(/\A\| r34 /).first.split("|")[-2].strip, "the r34 row's flags cell"

    doc = JSON.parse(JSON.generate(per_ruby.to_h))
    assert_equal %w[actionpack railties], doc["gem_differences"].first["gems"]
    assert_includes doc["configs"][1]["flags"].map { |f| f["kind"] }, "gems_differ"

    rows = CSV.parse(per_ruby.to_csv, headers: true)
    assert_equal ["actionpack 7.2.4; railties 7.2.4; rack 3.1.8", "actionpack 8.1.4.1; railties 8.1.4.1; rack 3.2.4"],
                 rows.map { |r| r["differing_gems"] }
    assert_includes rows[1]["flags"], "gems_differ"

    path = File.join(dir, "report.html")
    per_ruby.write_html(path)
    html = File.read(path)
    assert_includes html, "Gems that differ between configurations"
    assert_includes html, "<td>actionpack, railties</td><td>7.2.4 (ruby) vs 8.1.4.1 (r34)</td>"
    assert_includes html, "no: flagged (gems differ)"
    assert_includes html, "its servers loaded other gems than the baseline&#39;s (ruby)"
  end

  it "never flags differences a gem dimension or the server explains, and says nothing when the gems agree" do
    pinned = report({ dims("r34", "gem.rails" => "~> 7.2.0") => RAILS_72, dims("r34", "gem.rails" => "~> 8.1.0") => RAILS_81 })
    assert(pinned.configs.all? { |c| c.flags.none? { |f| f["kind"] == "gems_differ" } })
    assert_equal [["gem.rails"], true], pinned.gem_differences.first.values_at("told_apart_by", "explained")
    assert_includes pinned.terminal_table, "  rails-hello: actionpack, railties 7.2.4 (~> 7.2.0) vs 8.1.4.1 (~> 8.1.0)\n"
    refute_match(/g gems differ/, pinned.terminal_table)

    servers = report({ dims("r34") => RAILS_72, dims("r34", "server" => "unicorn") => RAILS_72.merge("rack" => "2.2.9") })
    assert(servers.configs.all? { |c| c.flags.none? { |f| f["kind"] == "gems_differ" } })

    same = report({ dims("ruby") => RAILS_72, dims("r34") => RAILS_72 })
    assert_empty same.gem_differences
    refute_includes same.terminal_table, "Gems that differ"
    assert(same.configs.all? { |c| c.to_h["differing_gems"].empty? })
  end

  it "flags a configuration whose batches loaded different gems" do
    mixed = report({ dims("ruby") => ->(batch) { batch == 3 ? RAILS_72.merge("rack" => "3.1.9") : RAILS_72 } })
    flag = mixed.configs.first.flags.find { |f| f["kind"] == "gems_differ" }
    assert_equal [3, ["rack"]], flag.values_at("batch", "gems")
    assert_equal "batch 3 loaded other gems than the configuration's first: rack 3.1.9 vs 3.1.8", flag["message"]
  end

  it "compares the gems of each pair, and flags a pair nothing that chooses gems tells apart" do
    compare = Rackbench::Report::Compare.configurations(per_ruby, "ruby=ruby", "ruby=r34")
    pair = JSON.parse(JSON.generate(compare.to_a)).first
    assert_equal({ "gem" => "actionpack", "a" => "7.2.4", "b" => "8.1.4.1" }, pair["gems_differ"].first)
    assert_equal ["gems_differ"], pair["flags"].map { |f| f["kind"] }
    assert_includes compare.terminal_table,
                    "Gems that differ (as the servers loaded them):\n  all: actionpack 7.2.4 (A) vs 8.1.4.1 (B), " \
                    "rack 3.1.8 (A) vs 3.2.4 (B), railties 7.2.4 (A) vs 8.1.4.1 (B) [g: not a dimension of the comparison]"
  end

  # One gem set on three rubies: the same versions everywhere, nokogiri
  # compiled from source on 3.1 (with its build tool mini_portile2) and
  # precompiled on the others.
  def one_set_of_platforms
    source = RAILS_72.merge("nokogiri" => "1.18.10", "mini_portile2" => "2.8.9")
    precompiled = RAILS_72.merge("nokogiri" => "1.18.10")
    platforms = { "ruby" => { "nokogiri" => "ruby", "puma" => "ruby" },
                  "r33" => { "nokogiri" => "x86_64-linux-gnu", "puma" => "ruby" },
                  "r34" => { "nokogiri" => "x86_64-linux-gnu", "puma" => "ruby" } }
    Rackbench::Store.open(Dir.mktmpdir("store", dir)) do |store|
      rates = %w[ruby r33 r34].to_h { |ruby| [dims(ruby), [1000, 1010, 990]] }
      ReportStore.fill(store, rates, fields: lambda { |d, _, _|
        gems = d["ruby"] == "ruby" ? source : precompiled
        { identity: { "gems" => gems, "gem_platforms" => platforms[d["ruby"]] }, gem_versions: gems }
      })
      Rackbench::Report.new(store)
    end
  end

  it "notes a native gem built otherwise at the same version, and a source gem's build tool, without a g flag" do
    report = one_set_of_platforms
    assert_empty report.gem_differences
    assert(report.configs.all? { |c| c.flags.none? { |f| f["kind"] == "gems_differ" } }, "no g flag")
    notes = report.gem_notes
    assert_equal [["platform", "nokogiri"], ["only_some", "mini_portile2"]], notes.map { |n| n.values_at("kind", "gem") }
    assert_equal "nokogiri 1.18.10: source on ruby, x86_64-linux-gnu on r33, r34", notes.first["text"]
    assert_equal [["ruby", "ruby"], ["x86_64-linux-gnu", "r33, r34"]],
                 notes.first["platforms"].map { |p| p.values_at("platform", "label") }
    assert_equal "mini_portile2 2.8.9: in the bundle on ruby, not on r33, r34", notes.last["text"]
    assert_equal({ "nokogiri" => "x86_64-linux-gnu", "puma" => "ruby" }, report.configs.last.to_h["gem_platforms"])

    text = report.terminal_table
    assert_includes text, "Gems built or bundled otherwise (the same versions; notes, not flags):\n" \
                          "  rails-hello: nokogiri 1.18.10: source on ruby, x86_64-linux-gnu on r33, r34\n" \
                          "  rails-hello: mini_portile2 2.8.9: in the bundle on ruby, not on r33, r34\n"
    refute_includes text, "Gems that differ"
    refute_match(/g gems differ/, text)
    doc = JSON.parse(JSON.generate(report.to_h))
    assert_equal %w[platform only_some], doc["gem_notes"].map { |n| n["kind"] }
    path = File.join(dir, "report.html")
    report.write_html(path)
    html = File.read(path)
    assert_includes html, "Gems built or bundled otherwise"
    assert_includes html, "<td>nokogiri 1.18.10: source on ruby, x86_64-linux-gnu on r33, r34</td>"
  end

  it "notes nothing when the platforms agree, or a gem-choosing dimension explains a gem only some bundles hold" do
    same = report({ dims("ruby") => RAILS_72, dims("r34") => RAILS_72 })
    assert_empty same.gem_notes
    refute_includes same.terminal_table, "built or bundled otherwise"
    servers = report({ dims("r34") => RAILS_72, dims("r34", "server" => "unicorn") => RAILS_72.except("puma").merge("unicorn" => "6.1.0") })
    assert_empty servers.gem_notes, "unicorn and puma are the server's choice"
  end

  it "reads the lock stored with trials from before the agent reported gems, without Bundler" do
    old = Rackbench::Store.open(Dir.mktmpdir("store", dir)) do |store|
      ReportStore.fill(store, { dims("ruby") => [1000, 1010] }, fields: lambda { |_, _, _|
        { gem_versions: RAILS_72.merge("bundler" => "2.3.15") }
      })
      Rackbench::Report.new(store)
    end
    assert_equal RAILS_72, old.configs.first.gems
  end
end
