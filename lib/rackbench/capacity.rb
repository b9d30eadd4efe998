# frozen_string_literal: true

require_relative "../rackbench"
require_relative "experiment"
require_relative "capacity/settings"
require_relative "capacity/judge"
require_relative "capacity/broadcast_judge"
require_relative "capacity/search"
require_relative "capacity/driver"
require_relative "capacity/summary"
require_relative "capacity/table"
require_relative "capacity/html_page"

module Rackbench
  # Capacity search (`rackbench capacity`, the `capacity:` section of an
  # experiment): per configuration, the highest open-loop rate at which a
  # latency percentile stays under a target and errors under a ratio. See
  # doc/methodology.md ("Capacity search") and doc/experiment.md.
  #
  # Settings :: the capacity: section
  # Judge :: one step's verdict (pass, fail, invalid) from its stored trial
  # BroadcastJudge :: the same for a broadcast's clients (a WebSocket workload)
  # Search :: the search itself (ramp, bisect, confirm), no I/O
  # Driver :: runs the searches, each step a derived experiment (Runner::Steps)
  # Summary :: the answer per configuration, and the JSON document
  # Table, HtmlPage :: the terminal table and DIR/capacity.html
  module Capacity
  end
end
