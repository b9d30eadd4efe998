# frozen_string_literal: true

require "test_helper"
require_relative "../fixtures/fakes"

# Per-host figures of a fleet's trials (Report::Hosts): each batch ran whole
# on one host; a host detectably slower than the rest of its testbed is
# flagged, one within the noise is not, and too few batches flag nothing.
describe Rackbench::Report::Hosts do
  # Two configurations (rates 1000 and 500), +batches+ batches per host,
  # each host's rates scaled by its factor, with a little noise per batch.
  def trials(factors, batches: 8)
    random = Random.new(3)
    factors.each_with_index.flat_map do |(host, factor), h|
      (1..batches).flat_map do |b|
        batch = (h * batches) + b
        noise = 1 + ((random.rand - 0.5) * 0.02)
        [1000.0, 500.0].each_with_index.map do |rate, c|
          result = Fakes::ENGINE_RESULT.merge("rps" => rate * factor * noise)
          record = Rackbench::Trial::Record.new(key: "c#{c}#batch=#{batch}", batch: batch, kind: "http", status: "ok",
                                                dims: { "threads" => c + 1 }, result: result, host: host)
          Rackbench::Report::TrialEntry.new(record)
        end
      end
    end
  end

  let(:options) { Rackbench::Report::Options.new(resamples: 1000) }

  it "flags a host 10% slower than the rest of its testbed, and none of the others" do
    hosts = Rackbench::Report::Hosts.of(trials({ "bench-a" => 1.0, "bench-b" => 1.0, "bench-c" => 0.9 }), options)
    assert_equal %w[bench-a bench-b bench-c], hosts.map(&:name)
    assert_equal [false, false, true], hosts.map(&:apart)
    slow = hosts.last
    assert_equal "slower", slow.comparison.verdict
    assert_in_delta 0.9 / 1.0, slow.comparison.ratio, 0.03
    assert_equal (17..24).to_a, slow.batches
    assert_equal 16, slow.ok
    doc = slow.to_h
    assert_equal true, doc["apart"]
    assert_in_delta 900.0, doc["rate_median"]["threads=1"], 15
  end

  it "flags nothing with two batches a host, and says nothing for one host" do
    hosts = Rackbench::Report::Hosts.of(trials({ "bench-a" => 1.0, "bench-b" => 0.8 }, batches: 1), options)
    assert_equal [false, false], hosts.map(&:apart)
    assert_equal ["too few batches"], hosts.map { |h| h.comparison.verdict }.uniq
    assert_empty Rackbench::Report::Hosts.of(trials({ "bench-a" => 1.0 }), options)
  end

  it "shows the hosts in the HTML report, the host that stands apart marked, and no section for one host" do
    hosts = Rackbench::Report::Hosts.of(trials({ "bench-a" => 1.0, "bench-b" => 1.0, "bench-c" => 0.9 }), options)
    document = lambda do |list|
      Rackbench::HtmlReport::Document.new({ "format" => Rackbench::HtmlReport::Document::FORMAT,
                                            "format_version" => Rackbench::HtmlReport::Document::FORMAT_VERSION,
                                            "experiment" => { "name" => "fleet" }, "configs" => [], "hosts" => list })
    end
    doc = document.call(hosts.map(&:to_h))
    section = Rackbench::HtmlReport::HostsSection.new(doc)
    html = section.render
    assert_includes html, %(<section id="hosts">)
    rows = html.scan(%r{<tr><td>(bench-[abc])</td>(.*?)</tr>}m)
    assert_equal %w[bench-a bench-b bench-c], rows.map(&:first)
    assert_equal [false, false, true], rows.map { |_, cells| cells.include?("stands apart") }
    assert_includes rows.last.last, "<td>17, 18, 19, 20, 21, 22, 23, 24</td>"
    assert_match(/<td class="num">0\.9\d\d<\/td>/, rows.last.last, "its ratio to the other hosts")

    single = document.call([])
    assert_equal "", Rackbench::HtmlReport::HostsSection.new(single).render
    refute Rackbench::HtmlReport::HostsSection.new(single).any?
  end
end
