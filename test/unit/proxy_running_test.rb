# frozen_string_literal: true

require "test_helper"

# A started proxy's window (Proxy::Running#start/#stop): the sample and
# the cache's counts between the edges, each left out alone when it
# cannot be taken; and its record document.
module ProxyRunningFakes
  Topology = Struct.new(:name, :program, :counter) do
    def cache_counter(_dir) = counter
  end
  Counter = Struct.new(:marks, :fail_mark) do
    def mark
      raise Rackbench::Error, "varnishstat failed" if fail_mark

      marks.shift
    end

    def since(mark) = { "hits" => marks.first - mark, "misses" => 0, "uncached" => 0 }
  end
  FakeSampler = Struct.new(:fail_start) do
    def start
      raise Errno::ENOENT, "/proc/1/stat" if fail_start

      self
    end

    def stop = { cpu_user_s: 0.5 }
  end
  ProxyProcess = Struct.new(:port)
end

describe Rackbench::Proxy::Running do

  def running(counter: ProxyRunningFakes::Counter.new([10, 25]), sampler: ProxyRunningFakes::FakeSampler.new)
    Rackbench::Proxy::Running.new(topology: ProxyRunningFakes::Topology.new("varnish", "varnishd", counter), process: ProxyRunningFakes::ProxyProcess.new(4100),
                                  dir: "/tmp/x", boot_s: 1.23456, version: "7.1.1", sampler: sampler, stop_grace_s: 1)
  end

  it "samples and counts between the edges and documents them" do
    proxy = running.start
    assert_equal({ "sample" => { "cpu_user_s" => 0.5 }, "cache" => { "hits" => 15, "misses" => 0, "uncached" => 0 } },
                 proxy.stop)
    doc = proxy.to_h
    assert_equal ["varnish", "varnishd", "7.1.1", 4100, 1.2346], doc.values_at("name", "program", "version", "port", "boot_s")
    assert_equal 15, doc["cache"]["hits"]
  end

  it "leaves out the count, or the sample, that cannot be taken, keeping the other" do
    no_count = running(counter: ProxyRunningFakes::Counter.new([], true)).start
    assert_equal({ "sample" => { "cpu_user_s" => 0.5 }, "cache" => nil }, no_count.stop)
    no_sample = running(sampler: ProxyRunningFakes::FakeSampler.new(true)).start
    assert_equal({ "sample" => nil, "cache" => { "hits" => 15, "misses" => 0, "uncached" => 0 } }, no_sample.stop)
  end

  it "has no window before it was measured" do
    doc = running.to_h
    assert_nil doc["sample"]
    assert_nil doc["cache"]
  end
end
