# frozen_string_literal: true

require "json"

# Builds results databases of synthetic experiments for the report tests:
# configurations with chosen throughputs per batch, each trial with an
# engine result derived from test/fixtures/engine_result.json (so it holds
# a real histogram and timeline).
module ReportStore
  ENGINE_RESULT = JSON.parse(File.read(File.expand_path("../fixtures/engine_result.json", __dir__))).freeze

  # An https:// trial's "tls" object (doc/output.md): 4 full handshakes
  # of 2 ms in the warmup, then 100 resumed ones of 0.5 ms in the window,
  # where 100 of 1000 responses paid one.
  def self.tls_document(responses: 1000)
    latency = ->(mean) { %w[min mean stdev max p50 p90 p99 p99_9].to_h { |k| [k, k == "stdev" ? 0.0 : mean] } }
    none = latency.call(0.0)
    failures = %w[not_tls verify alpn handshake protocol].to_h { |k| [k, 0] }
    { "version" => "TLSv1.3", "cipher" => "TLS_AES_256_GCM_SHA384", "alpn" => "http/1.1",
      "handshakes" => 100, "resumed" => 100, "handshake_responses" => 100,
      "handshake_response_fraction" => 100.0 / responses, "failures" => failures,
      "full_handshake_us" => none, "resumed_handshake_us" => latency.call(500.0), "reason" => nil,
      "warmup" => { "handshakes" => 4, "resumed" => 0, "handshake_responses" => 4,
                    "handshake_response_fraction" => 0.004, "failures" => failures,
                    "full_handshake_us" => latency.call(2000.0), "resumed_handshake_us" => none } }
  end

  module_function

  # configs :: { dims Hash => [rps of batch 1, rps of batch 2, ...] } (nil = a failed trial)
  # fields :: nil, or a Proc given (dims, batch, engine result) returning
  #           record fields to set on an ok HTTP trial (sample:, ...)
  # environment :: the stored machine (default: none but its warnings)
  # labels :: a Rackbench::Labels stored with the experiment, part of its identity (default: none)
  # Returns the experiment id.
  def fill(store, configs, name: "synthetic", source_text: nil, timeline: nil, fields: nil,
           environment: { "warnings" => [] }, labels: nil)
    fingerprint = name.ljust(64, "0")
    id = store.find_or_create_experiment(name: name, fingerprint: labels ? labels.fingerprint(fingerprint) : fingerprint,
                                         seed: 1, batches: configs.values.map(&:size).max, source_text: source_text,
                                         environment: environment, labels: labels&.to_h)
    position = 0
    configs.each do |dims, values|
      values.each_with_index do |rps, i|
        position += 1
        store.save_trial(id, trial(dims, i + 1, position, rps, timeline, fields))
      end
    end
    id
  end

  def trial(dims, batch, position, rps, timeline, fields = nil)
    base = { key: "#{JSON.generate(dims)}#batch=#{batch}", batch: batch, position: position, kind: "http",
             ruby: dims["ruby"], server: dims["server"], app: dims["app"], processes: dims["processes"],
             threads: dims["threads"], dims: dims }
    return Rackbench::Trial::Record.new(**base, status: "failed", reason: "server not ready after 60s") if rps.nil?
    return micro_trial(base, rps) if dims["app"].to_s.start_with?("micro-")

    engine = JSON.parse(JSON.generate(ENGINE_RESULT))
    engine["rps"] = rps
    if dims["app"] == "download" # 8 MiB responses
      engine["bytes_per_s"] = rps * 8 * 1_048_576
      engine["mb_per_s"] = rps * 8 * 1_048_576 / 1e6
    end
    engine["timeline"] = timeline.map.with_index { |n, s| engine["timeline"][0].merge("second" => s, "requests" => n) } if timeline
    sample = { "rss_peak_bytes" => 40_000_000, "pss_peak_bytes" => 30_000_000 }
    Rackbench::Trial::Record.new(**base, status: "ok", result: engine, sample: sample,
                                         **(fields ? fields.call(dims, batch, engine) : {}))
  end

  # A micro-benchmark's trial: its script's document.
  def micro_trial(base, rate)
    doc = { "format" => "rackbench-micro-fibers", "status" => "ok", "messages_per_s" => rate, "messages" => 1000,
            "measured_s" => 1000 / rate, "rss_peak_bytes" => 20_000_000, "pss_end_bytes" => 15_000_000 }
    Rackbench::Trial::Record.new(**base, kind: "script", status: "ok", result: doc)
  end

  # n values around mean with relative noise sd (seeded Box-Muller).
  def noisy(mean, relative_sd, n, seed)
    random = Random.new(seed)
    Array.new(n) do
      u1 = 1.0 - random.rand
      u2 = random.rand
      mean * (1 + relative_sd * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math::PI * u2))
    end
  end

  def dims(ruby:, server: "puma", threads: 4)
    { "ruby" => ruby, "server" => server, "app" => "rack-hello", "processes" => 1, "threads" => threads }
  end
end
