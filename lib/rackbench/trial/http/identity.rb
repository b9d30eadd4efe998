# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      # The identity check: before a trial measures, every process of its
      # server proves it runs what the trial's label names (the ruby and its
      # JIT, the variables the variant, app and experiment set, the server
      # gem the bundle locks). The processes report through the trial's
      # directory (agent/identity.rb, loaded by the launcher); Expectation
      # says what they must report; Check compares and builds the record
      # stored with the trial.
      module Identity
        # The script every server process loads.
        AGENT = File.expand_path("../../agent/identity.rb", __dir__)
        # Variables through which the runner tells the agent what to report:
        # the names of the checked variables (comma-separated), and the
        # server's gem.
        ENV_LIST_VAR = ServerEnv::CHECKED_LIST_VAR
        SERVER_GEM_VAR = "RACKBENCH_SERVER_GEM"
        # Set by the agent in each server process's ENV once it has reported:
        # found in the environment block of a program it exec'd (see Check).
        EXEC_MARK = "RACKBENCH_EXECED_BY"

        # Where the processes of a trial whose directory is trial_dir report.
        def self.directory(trial_dir)
          File.join(trial_dir, "identity")
        end
      end
    end
  end
end

require_relative "identity/expectation"
require_relative "identity/check"
