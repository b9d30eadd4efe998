# frozen_string_literal: true

require "test_helper"
require "open3"
require "rbconfig"
require "support/test_rubies"

# The refusal before the run with real rubies under real valgrind: the
# system's Ruby 3.1 with --yjit crashes at boot under callgrind
# ("[BUG] Segmentation fault" in rubygems.rb), so its configuration is
# left out of the plan with that line; Ruby 3.4.5 built from source
# (test/support/test_rubies.rb) with --yjit runs under it, so its
# configuration is planned. A dry run: the probes run (each variant's
# interpreter under callgrind, instrumentation off then on), no trial
# does. About 15 s here, the probes' answers in a cache of the test's own.
describe "rubies valgrind cannot run, refused before the run (integration)" do
  let(:dir) { Dir.mktmpdir("rackbench-instructions-yjit") }
  after { FileUtils.rm_rf(dir) }

  it "leaves out 3.1 with YJIT, naming its crash, and plans 3.4 with YJIT" do
    ruby34 = TestRubies.ruby("3.4")
    file = File.join(dir, "yjit.yml")
    File.write(file, <<~YAML)
      name: instructions-yjit
      seed: 1
      batches: 1
      rubies:
        - { name: y31, ruby: ruby, options: --yjit }
        - { name: y34, ruby: #{ruby34}, options: --yjit }
      servers: [puma]
      apps: [rack-hello]
      processes: 1
      threads: 1
      measure: instructions
      load: { count: 50, timeout: 10s }
    YAML
    env = { "RACKBENCH_CACHE" => File.join(dir, "cache") }
    out, err, status = rackbench("run", file, "--dry-run", "--results", File.join(dir, "results"), env: env)

    assert status.success?, err
    planned = out.lines.grep(/\A\s+\d+\. batch/)
    assert_equal 1, planned.size, out
    assert_match(/ruby=y34 .*\(instructions\)/, planned.first)
    refused = out.lines.grep(/ruby=y31 server=puma app=rack-hello processes=1 threads=1: /)
    assert_equal 1, refused.size, out
    assert_match(/y31 cannot run under valgrind \(--instr-atstart=no\): \S*rubygems\.rb:\d+: \[BUG\] Segmentation fault/,
                 refused.first)
  end
end
