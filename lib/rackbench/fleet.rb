# frozen_string_literal: true

module Rackbench
  # The fleet (doc/fleet.md): an experiment's batches spread over many
  # benchmark hosts through a PostgreSQL results database. `run --fleet`
  # plans and stores the experiment as a local run does and queues its
  # batches (Submit); `rackbench worker` on each host of the testbed claims
  # them whole, one at a time, and runs each with the ordinary Runner
  # (Worker); the report reads the trials as it reads any, each with the
  # host that ran it.
  module Fleet
    DEFAULT_TESTBED = "default"
  end
end

require_relative "fleet/queue"
require_relative "fleet/workers"
require_relative "fleet/claimed_store"
require_relative "fleet/experiment_check"
require_relative "fleet/worker"
require_relative "fleet/submit"
require_relative "fleet/follow"
