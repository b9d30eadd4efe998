# frozen_string_literal: true

require "yaml"
require "fileutils"
require "tmpdir"

# Runs the steps of one job of a GitHub Actions workflow file on this
# machine, as a runner would, without GitHub: each `run:` step in bash
# (`bash --noprofile --norc -eo pipefail`, GitHub's default shell) in the
# workspace, with the job's and the step's env, `${{ }}` expressions
# replaced from a context the test gives, and `if:` conditions evaluated.
# Only the expressions and conditions the example workflow uses are
# understood; any other fails the test, so the workflow cannot grow a step
# this runner would silently skip. `uses:` steps: actions/checkout (the
# test has checked the workspace out) and actions/upload-artifact (its
# path must exist) only.
class WorkflowRunner
  Step = Struct.new(:name, :exit_code, :output, keyword_init: true) do
    def skipped? = exit_code.nil?
  end

  Job = Struct.new(:steps, :success, keyword_init: true) do
    def step(name) = steps.find { |s| s.name == name } || raise(ArgumentError, "no step #{name.inspect}")
  end

  STEP_TIMEOUT_S = 600

  # path :: the workflow file
  # job :: the job's id
  def initialize(path, job:)
    workflow = YAML.safe_load(File.read(path))
    @job = workflow.fetch("jobs").fetch(job)
  end

  # Every `run:` step of the job's steps.
  def commands
    @job.fetch("steps").filter_map { |step| step["run"] }
  end

  # Runs the job. context :: expression => value ("github.event_name" =>
  # "push", ...); workspace :: the checked-out repository; env :: the
  # runner's environment (PATH, GITHUB_STEP_SUMMARY, RUNNER_TEMP...);
  # overrides :: job env values the test replaces (a store directory).
  def run(context:, workspace:, env:, overrides: {})
    job_env = substitute_env(@job.fetch("env", {}), context).merge(overrides)
    success = true
    steps = @job.fetch("steps").map do |step|
      name = step["name"] || step["uses"]
      next Step.new(name: name) unless condition?(step["if"], context, success)

      step_env = job_env.merge(substitute_env(step.fetch("env", {}), context))
      code, output = step["uses"] ? use(step, context) : shell(step.fetch("run"), workspace, env.merge(step_env))
      success &&= code.zero?
      Step.new(name: name, exit_code: code, output: output)
    end
    Job.new(steps: steps, success: success)
  end

  private

  EXPRESSION = /\$\{\{\s*(.*?)\s*\}\}/

  def substitute(text, context)
    text.to_s.gsub(EXPRESSION) { context.fetch(Regexp.last_match(1)) { raise ArgumentError, "unknown expression #{Regexp.last_match(1)}" }.to_s }
  end

  def substitute_env(env, context)
    env.to_h { |k, v| [k, substitute(v, context)] }
  end

  # GitHub adds success() to a condition without a status function.
  def condition?(text, context, success)
    return success if text.nil?

    terms = text.split("&&").map(&:strip)
    status = terms.any? { |t| %w[always() failure()].include?(t) } ? true : success
    status && terms.all? do |term|
      case term
      when "always()" then true
      when "failure()" then !success
      when /\A([\w.]+) == '([^']*)'\z/ then context.fetch(Regexp.last_match(1)).to_s == Regexp.last_match(2)
      else raise ArgumentError, "unknown condition #{term.inspect}"
      end
    end
  end

  def use(step, context)
    case step["uses"]
    when %r{\Aactions/checkout@} then [0, "checked out by the test"]
    when %r{\Aactions/upload-artifact@}
      path = substitute(step.dig("with", "path"), context)
      File.exist?(path) ? [0, "uploaded #{path}"] : [1, "no file at #{path}"]
    else raise ArgumentError, "unknown action #{step["uses"]}"
    end
  end

  # [exit code, output] of +script+ in bash; the whole process group is
  # stopped after STEP_TIMEOUT_S (the test then fails on its code).
  def shell(script, workspace, env)
    Dir.mktmpdir("rackbench-workflow-step") do |dir|
      file = File.join(dir, "step.sh")
      log = File.join(dir, "output")
      File.write(file, script)
      pid = Process.spawn(env, "bash", "--noprofile", "--norc", "-eo", "pipefail", file,
                          chdir: workspace, out: log, err: %i[child out], in: File::NULL, pgroup: true)
      waiter = Process.detach(pid)
      stop_group(pid, waiter) unless waiter.join(STEP_TIMEOUT_S)
      [waiter.value.exitstatus || 128 + waiter.value.termsig.to_i, File.read(log)]
    end
  end

  # TERM, 10 s to exit, then KILL, to the step's whole process group.
  def stop_group(pgid, waiter)
    %w[TERM KILL].each do |signal|
      Process.kill(signal, -pgid)
      return if waiter.join(10)
    rescue Errno::ESRCH
      return
    end
    waiter.join
  end
end
