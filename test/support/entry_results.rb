# frozen_string_literal: true

require "json"
require_relative "report_store"

# Fabricated engine documents of a request list (doc/output.md, "entries"):
# each entry with its own requests, statuses, errors, warmup and a real
# latency histogram built from given latencies, and top-level figures that
# are exactly the entries' sums, as the engine's contract says.
module EntryResults
  SUB_BUCKET_BITS = 7
  KNOWN_ERRORS = { "connect" => 0, "read" => 0, "write" => 0, "timeout" => 0, "parse" => 0, "capture" => 0 }.freeze

  module_function

  # A histogram Hash of the engine's shape holding +latencies_ns+ (Integers):
  # log-linear buckets (width 1 below 2^(bits+1) ns, then doubling with
  # each power of two), mean and sum of squared deviations exact.
  def histogram(latencies_ns)
    counts = Hash.new(0)
    latencies_ns.each { |ns| counts[bucket(ns)] += 1 }
    n = latencies_ns.size
    mean = n.zero? ? 0.0 : latencies_ns.sum.fdiv(n)
    { "scheme" => "log-linear", "unit" => "ns", "sub_bucket_bits" => SUB_BUCKET_BITS, "total" => n,
      "min_ns" => latencies_ns.min || 0, "max_ns" => latencies_ns.max || 0, "mean_ns" => mean,
      "m2_ns2" => latencies_ns.sum { |ns| (ns - mean)**2 },
      "buckets" => counts.sort.map { |(low, high), count| [low, high, count] } }
  end

  def bucket(ns)
    shift = [ns.bit_length - (SUB_BUCKET_BITS + 1), 0].max
    low = (ns >> shift) << shift
    [low, low + (1 << shift)]
  end

  # One entry object. +latencies_ns+ gives its measured responses (one
  # per response); :status defaults to all of them 200.
  # :errors :: transport errors by kind (unknown kinds allowed)
  # :warmup :: {"requests", "status", "errors"} of the warmup (default: all 200, none failed)
  def entry(index, name, latencies_ns, status: nil, errors: {}, warmup: nil, first: false, weight: 1, hops: 0)
    entry = { "index" => index, "first" => first, "weight" => weight, "requests" => latencies_ns.size,
              "hops" => hops, "status" => status || { "200" => latencies_ns.size },
              "errors" => KNOWN_ERRORS.merge(errors), "latency_us" => latency_us(latencies_ns),
              "histogram" => histogram(latencies_ns),
              "warmup" => warmup || { "requests" => 10, "status" => { "200" => 10 }, "errors" => KNOWN_ERRORS.dup } }
    name ? { "name" => name }.merge(entry) : entry
  end

  def latency_us(latencies_ns)
    h = Rackbench::Stats::LatencyHistogram.new(histogram(latencies_ns))
    p = h.percentiles_us([50, 90, 99, 99.9])
    { "min" => h.min_us, "mean" => h.mean_us, "stdev" => h.stddev_us, "max" => h.max_us, "p50" => p["p50"],
      "p90" => p["p90"], "p99" => p["p99"], "p99_9" => p["p99.9"] }
  end

  # The fixture engine document with +entries+ (nil: a single URL, no
  # entries key) and every top-level count their sum, over +duration_s+.
  def result(entries, duration_s: 2.0)
    doc = JSON.parse(JSON.generate(ReportStore::ENGINE_RESULT))
    doc["duration_s"] = duration_s
    return doc if entries.nil?

    add = ->(hashes) { hashes.each_with_object(Hash.new(0)) { |h, sum| h.each { |k, n| sum[k] += n } } }
    doc["entries"] = entries
    doc["requests"] = entries.sum { |e| e["requests"] }
    doc["rps"] = doc["requests"] / duration_s
    doc["status"] = add.call(entries.map { |e| e["status"] })
    doc["errors"] = add.call(entries.map { |e| e["errors"] })
    doc["histogram"] = Rackbench::Stats::LatencyHistogram.merge(entries.map { |e| e["histogram"] }).to_h
    doc["warmup"] = doc["warmup"].merge(
      "requests" => entries.sum { |e| e["warmup"]["requests"] },
      "status" => add.call(entries.map { |e| e["warmup"]["status"] }),
      "errors" => add.call(entries.map { |e| e["warmup"]["errors"] })
    )
    doc
  end

  # Stores one experiment: configs is { dims => [engine document per batch] }.
  # Returns the experiment id.
  def fill(store, configs, name: "entries")
    id = store.find_or_create_experiment(name: name, fingerprint: name.ljust(64, "0"), seed: 1,
                                         batches: configs.values.map(&:size).max, source_text: nil,
                                         environment: { "warnings" => [] })
    position = 0
    configs.each do |dims, documents|
      documents.each_with_index do |doc, i|
        position += 1
        store.save_trial(id, Rackbench::Trial::Record.new(
                               key: "#{JSON.generate(dims)}#batch=#{i + 1}", batch: i + 1, position: position,
                               kind: "http", ruby: dims["ruby"], server: dims["server"], app: dims["app"],
                               processes: dims["processes"], threads: dims["threads"], dims: dims, status: "ok",
                               result: doc, sample: { "rss_peak_bytes" => 40_000_000, "pss_peak_bytes" => 30_000_000 }
                             ))
      end
    end
    id
  end

  # A report of configs (as #fill's) with Report options.
  def report(dir, configs, **options)
    Rackbench::Store.open(Dir.mktmpdir("results", dir)) do |store|
      fill(store, configs)
      Rackbench::Report.new(store, **options)
    end
  end
end
