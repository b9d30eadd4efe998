# frozen_string_literal: true

module Rackbench
  module Instructions
    # The load settings an instructions trial cannot count steadily,
    # refused before the run with the reason (the experiment file's check:
    # Experiment#check_measure). Everything else a user can set is safe:
    # every request of the window waits for the server to sleep
    # (Instructions::Window's gate), so connections, think times and the
    # machine's load no longer decide which path a request takes, and the
    # GC is counted apart (doc/methodology.md, "Instructions per request").
    module SettingsCheck
      # [key, message] of the first setting of +config+ (an
      # Experiment::Config) that an instructions trial cannot count
      # steadily, or nil.
      def self.problem(config)
        load = config.load
        if load[:threads].to_i > 1
          ["load.threads", "#{load[:threads]} engine threads cannot count instructions: each request of an " \
                           "instructions window waits until the server sleeps and nothing else is in flight, which " \
                           "one engine thread sees (load.threads: 1)"]
        elsif load[:host]
          ["load.host", "an instructions window's requests wait until the server's processes sleep, which the engine " \
                        "reads in /proc beside the server: it cannot run on a load host"]
        elsif load[:warmup_count] && load[:warmup_count] < Experiment::Settings::INSTRUCTIONS_MIN_WARMUP_COUNT
          ["load.warmup_count", "#{load[:warmup_count]} is too few for instructions: a window after fewer than " \
                                "#{Experiment::Settings::INSTRUCTIONS_MIN_WARMUP_COUNT} warmup requests counts the " \
                                "server's one-time work (a JIT compiling, caches filling; Ruby 3.4 with YJIT varied " \
                                "by 38% between batches)"]
        end
      end
    end
  end
end
