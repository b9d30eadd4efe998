# frozen_string_literal: true

require "test_helper"

# `proxy:` in the experiment file: one name or a list, validated with one
# line; none (the default) is no dimension and keeps the fingerprint of a
# file without the key; anything else tags every configuration; a list
# of several is a dimension like processes, excludable and derivable.
describe "experiment proxy:" do
  PROXY_EXPERIMENT_BASE = <<~YAML
    name: proxied
    servers: [puma]
    apps: [rack-hello]
  YAML

  def parse(extra = "")
    Rackbench::Experiment.parse(PROXY_EXPERIMENT_BASE + extra, source: "p.yml")
  end

  def error(extra)
    assert_raises(Rackbench::ConfigError) { parse(extra) }.message
  end

  it "defaults to none: no dimension, and the fingerprint of a file without the key" do
    without = parse
    assert_equal ["none"], without.proxy
    refute without.dimensions.key?("proxy")
    assert_equal "none", without.configurations.first.proxy
    refute without.configurations.first.proxied?
    assert_equal without.fingerprint, parse("proxy: none\n").fingerprint
    assert_equal without.fingerprint, parse("proxy: [none]\n").fingerprint
    assert_equal without.configurations.map(&:key), parse("proxy: none\n").configurations.map(&:key)
  end

  it "makes a list a dimension, and tags every configuration with a single proxy" do
    exp = parse("proxy: [none, nginx, nginx-cache, varnish]\n")
    assert_equal %w[none nginx nginx-cache varnish], exp.dimensions["proxy"]
    assert_equal %w[none nginx nginx-cache varnish], exp.configurations.map(&:proxy)
    assert_equal [false, true, true, true], exp.configurations.map(&:proxied?)
    assert_match(/proxy=nginx-cache/, exp.configurations[2].to_s)

    single = parse("proxy: nginx\n")
    assert_equal({ "proxy" => "nginx" }, single.configurations.first.dims.slice("proxy"))
    refute_equal parse.fingerprint, single.fingerprint
    refute_equal single.fingerprint, parse("proxy: varnish\n").fingerprint
    assert_equal parse("proxy: [nginx, none]\n").fingerprint, parse("proxy: [none, nginx]\n").fingerprint
  end

  it "excludes and derives along the proxy dimension" do
    exp = parse("proxy: [none, nginx, varnish]\nexclude:\n  - { proxy: varnish }\n")
    assert_equal %w[none nginx], exp.configurations.map(&:proxy)
    derived = exp.derive(name: "proxied.nginx", only: exp.configurations.last)
    assert_equal ["nginx"], derived.configurations.map(&:proxy)
    assert_equal ["nginx"], derived.proxy
  end

  it "refuses unknown proxies, duplicates and other shapes with one line naming the key" do
    assert_equal "p.yml: proxy: unknown proxy \"squid\"; known: none, nginx, nginx-cache, varnish", error("proxy: squid\n")
    assert_match(/\Ap\.yml: proxy\[1\]: unknown proxy "ngnix" \(did you mean nginx\?\)/, error("proxy: [none, ngnix]\n"))
    assert_match(/\Ap\.yml: proxy: duplicate value "nginx"\z/, error("proxy: [nginx, nginx]\n"))
    assert_match(/\Ap\.yml: proxy\[0\]: /, error("proxy: [{ upstream: 10.0.0.1 }]\n"))
    assert_match(/\Ap\.yml: exclude\[0\]\.proxy: "varnish" is not in the matrix/,
                 error("proxy: [none, nginx]\nexclude:\n  - { proxy: varnish }\n"))
    assert_equal 1, error("proxy: squid\n").lines.size
  end
end
