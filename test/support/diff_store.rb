# frozen_string_literal: true

require "json"
require_relative "report_store"

# Results databases of synthetic instructions trials with call graphs, for
# the diff tests: a program of a few functions (a server's loop calling
# the VM, which calls a hash store and malloc), whose self costs per
# request a configuration chooses, each batch varying by a little seeded
# noise, stored as Instructions::Collection stores a trial's counts.
module DiffStore
  REQUESTS = 2000
  # The call structure: caller => callees, by function name.
  CALLS = { "start_thread" => %w[vm_exec_core], "vm_exec_core" => %w[vm_call_cfunc rb_hash_aset malloc],
            "vm_call_cfunc" => %w[rb_hash_aset rb_str_new], "rb_str_new" => %w[malloc] }.freeze
  OBJECTS = { "malloc" => "libc.so.6", "start_thread" => "libc.so.6" }.freeze
  # Self instructions per request of a stock configuration; calls per request.
  STOCK = { "start_thread" => 2_000, "vm_exec_core" => 120_000, "vm_call_cfunc" => 20_000, "rb_hash_aset" => 15_000,
            "rb_str_new" => 8_000, "malloc" => 12_000 }.freeze
  CALLS_PER_REQUEST = { "vm_exec_core" => 1, "vm_call_cfunc" => 40, "rb_hash_aset" => 30, "rb_str_new" => 20,
                        "malloc" => 60, "start_thread" => 0 }.freeze

  module_function

  # The instructions document of one batch of a configuration whose self
  # costs per request are +costs+ (name => instructions), each varied by
  # +noise+ (relative) with +random+.
  # +cache_sim+: as with the cache simulation, each function's cycles 1.5
  # times its instructions, 2,000 LL hits and 100 RAM accesses a request.
  def document(costs, random, noise: 0.0005, cache_sim: false)
    self_costs = costs.to_h { |name, cost| [name, (cost * REQUESTS * (1 + (noise * ((2 * random.rand) - 1)))).round] }
    inclusive = Hash.new { |hash, name| hash[name] = self_costs.fetch(name, 0) + CALLS.fetch(name, []).sum { |c| share_of(c, name, hash) } }
    names = self_costs.keys.sort_by { |name| -self_costs[name] }
    functions = names.map do |name|
      { "object" => OBJECTS.fetch(name, "libruby.so.3.4"), "name" => name, "self" => self_costs[name],
        "inclusive" => inclusive[name], "calls" => CALLS_PER_REQUEST.fetch(name, 1) * REQUESTS }
        .merge(cache_sim ? { "cycles" => (self_costs[name] * 1.5).round } : {})
    end
    edges = CALLS.flat_map do |from, callees|
      callees.select { |to| names.include?(to) && names.include?(from) }.map do |to|
        [names.index(from), names.index(to), REQUESTS, share_of(to, from, inclusive)]
      end
    end
    total = self_costs.values.sum
    simulated = { "per_request" => total * 1.5 / REQUESTS, "model" => Rackbench::Instructions::Cycles::MODEL,
                  "ll_hits" => 2000 * REQUESTS, "ram_hits" => 100 * REQUESTS, "cycles" => (total * 1.5).round }
    { "tool" => "callgrind", "valgrind" => "3.19.0", "requests" => REQUESTS, "instructions" => total,
      "per_request" => total.fdiv(REQUESTS), "processes" => [], "left_out" => [],
      "functions" => functions.first(60).map { |f| { "object" => f["object"], "name" => f["name"], "instructions" => f["self"], "per_request" => f["self"].fdiv(REQUESTS) } },
      "call_graph" => { "total" => total, "unlisted_self_max" => 0, "functions" => functions, "edges" => edges } }
      .merge(cache_sim ? { "cache_sim" => simulated } : {})
  end

  # What +callee+ costs when called from +caller+: its inclusive cost
  # shared among its callers equally.
  def share_of(callee, _caller, inclusive)
    callers = CALLS.count { |_, callees| callees.include?(callee) }
    inclusive[callee] / callers
  end

  # An instructions trial of +dims+ in +batch+ with +doc+.
  def trial(dims, batch, position, doc)
    engine = JSON.parse(JSON.generate(ReportStore::ENGINE_RESULT)).merge("rps" => 90.0, "requests" => REQUESTS)
    Rackbench::Trial::Record.new(key: "#{JSON.generate(dims)}#batch=#{batch}#instructions", batch: batch,
                                 position: position, kind: "http", ruby: dims["ruby"], server: dims["server"],
                                 app: dims["app"], processes: 1, threads: 1, dims: dims, status: "ok", result: engine,
                                 load_settings: { "count" => REQUESTS, "measure" => "instructions" }, instructions: doc)
  end

  # Stores +configs+ ({dims => costs}) with +batches+ batches each in
  # +store+; +time+ adds time trials ({dims => [rps...]}). Returns the
  # experiment id.
  def fill(store, configs, batches: 5, seed: 1, time: {}, name: "diffs", noise: 0.0005, cache_sim: false)
    id = time.empty? ? nil : ReportStore.fill(store, time, name: name)
    id ||= store.find_or_create_experiment(name: name, fingerprint: name.ljust(64, "0"), seed: 1, batches: batches,
                                           source_text: nil, environment: { "warnings" => [] })
    random = Random.new(seed)
    position = 1000
    configs.each do |dims, costs|
      (1..batches).each do |batch|
        store.save_trial(id, trial(dims, batch, position += 1, document(costs, random, noise: noise, cache_sim: cache_sim)))
      end
    end
    id
  end
end
