# frozen_string_literal: true

require "test_helper"
require_relative "../support/report_store"

# What every report view says about how far to trust a configuration: the
# machine's warnings, a warmup with failed requests, a busy machine, and
# what its servers really ran.
describe "Rackbench::Report: warnings, warmup errors, busy machine, what ran" do
  let(:dir) { Dir.mktmpdir }
  after { FileUtils.rm_rf(dir) }

  IDENTITY = {
    "description" => "ruby 3.1.2p20 (2022-04-12 revision 4491bb740a) +YJIT [x86_64-linux-gnu]", "jit" => "yjit",
    "server_gem" => { "name" => "puma", "version" => "8.0.2" }, "env" => { "RACK_ENV" => "production", "X" => nil },
    "processes" => [{ "pid" => 1 }, { "pid" => 2 }, { "pid" => 3 }], "mismatches" => []
  }.freeze

  def report
    Rackbench::Store.open(File.join(dir, "results")) do |store|
      id = ReportStore.fill(store, { ReportStore.dims(ruby: "a") => [1000, 1010, 990] })
      store.db[:experiments].where(id: id).update(environment: JSON.generate(
        "warnings" => ["load average 2.50 on 2 CPUs (1.25 per CPU, above 0.5): other work is running"]
      ))
      run = store.start_run(id, resumed: true, environment: { "warnings" => ["12 MiB of swap in use"] })
      store.finish_run(run, "finished")
      store.start_run(id, resumed: true, environment: { "warnings" => ["CPU frequency governor is powersave"] })
      trials = store.db[:trials].where(experiment_id: id).order(:batch).all
      first = JSON.parse(trials[0][:result])
      first["warmup"].merge!("requests" => 100, "status" => { "200" => 95, "422" => 5 })
      first["late"].merge!("unsent" => 7, "scheduled" => 1007)
      store.db[:trials].where(id: trials[0][:id]).update(
        result: JSON.generate(first),
        machine: JSON.generate("busy" => true, "other_cpu_percent" => 35.0,
                               "busiest" => [{ "pid" => 9, "name" => "gcc", "cpu_percent" => 30.0 }])
      )
      trials.each do |t|
        identity = t[:batch] == 3 ? IDENTITY.merge("jit" => nil) : IDENTITY
        store.db[:trials].where(id: t[:id]).update(identity: JSON.generate(identity))
      end
      Rackbench::Report.new(store)
    end
  end

  it "flags a batch whose warmup had failed requests, and one measured while the machine was busy" do
    config = report.configs.first.to_h
    kinds = config["flags"].map { |f| [f["kind"], f["batch"]] }
    assert_includes kinds, ["warmup_errors", 1]
    assert_includes kinds, ["busy_machine", 1]
    assert_includes kinds, ["unsent_requests", 1]
    unsent = config["flags"].find { |f| f["kind"] == "unsent_requests" }
    assert_equal "batch 1: 7 of 1007 requests scheduled in the window were never sent (every connection was " \
                 "waiting on the server)", unsent["message"]
    assert_equal 200.0, config["offered_rps"], "the offered rate beside the achieved one"
    warmup = config["flags"].find { |f| f["kind"] == "warmup_errors" }
    assert_match(/batch 1: 5 of 100 warmup requests failed \(422: 5\)/, warmup["message"])
    busy = config["flags"].find { |f| f["kind"] == "busy_machine" }
    assert_equal "batch 1: other processes used 35% of a CPU during the window: gcc (pid 9) 30.0%", busy["message"]
    refute(config["flags"].any? { |f| f["batch"] == 2 && %w[warmup_errors busy_machine unsent_requests].include?(f["kind"]) })
  end

  it "keeps the machine's warnings of the experiment's start and of every later run" do
    warnings = report.to_h["experiment"]["warnings"]
    assert_equal [["experiment", "load average 2.50 on 2 CPUs (1.25 per CPU, above 0.5): other work is running"],
                  ["run 1", "12 MiB of swap in use"], ["run 2", "CPU frequency governor is powersave"]],
                 warnings.map { |w| [w["at"], w["message"]] }
  end

  it "says what ran, per distinct identity with its batches" do
    ran = report.configs.first.ran
    assert_equal [[[1, 2], "yjit"], [[3], nil]], ran.map { |r| [r["batches"], r["jit"]] }
    assert_equal 3, ran.first["processes"]
  end

  it "shows all of it in the terminal" do
    text = Rackbench::Report::Terminal.new(report).render
    assert_match(/\AMachine warnings \(the figures below are less trustworthy\):\n  load average 2\.50/, text)
    assert_includes text, "  run 1: 12 MiB of swap in use"
    assert_match(/\| +[Fnovwseub]*e[Fnovwseub]*u[Fnovwseub]*b[Fnovwseub]* +\|/, text, "the e, u and b marks in the flags column")
    assert_match(/\| req\/s \| offered \|/, text, "the offered rate beside the achieved one in open loop")
    assert_includes text, "e warmup errors, u unsent requests, b busy machine"
    assert_includes text, "a: ruby 3.1.2p20, YJIT on, puma 8.0.2, 3 processes; RACK_ENV=production X unset (batches 1, 2)"
    assert_includes text, "a: ruby 3.1.2p20, no JIT, puma 8.0.2, 3 processes; RACK_ENV=production X unset (batches 3)"
  end

  it "shows all of it in the HTML page" do
    page = Rackbench::HtmlReport.new(report.to_h).render
    assert_includes page, "<li>load average 2.50 on 2 CPUs (1.25 per CPU, above 0.5): other work is running</li>"
    assert_includes page, "<li>run 2: CPU frequency governor is powersave</li>"
    assert_includes page, "batch 1: 5 of 100 warmup requests failed"
    assert_includes page, "<th class=\"num\">offered/s</th>"
    assert_includes page, "<td>ruby 3.1.2p20 (2022-04-12 revision 4491bb740a) +YJIT [x86_64-linux-gnu]</td><td>YJIT</td>" \
                          "<td>puma 8.0.2</td><td class=\"num\">3</td><td>RACK_ENV=production X unset</td><td>1, 2</td>"
  end
end
