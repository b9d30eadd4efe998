# frozen_string_literal: true

module Rackbench
  # Base of every error rackbench reports to the user as one line.
  class Error < StandardError; end

  # Bad command-line arguments or option values.
  class UsageError < Error; end

  # A malformed or misspelt experiment file or configuration value; the
  # message names the key (and the allowed values).
  class ConfigError < Error; end

  # A Ruby, server or app could not be prepared (not found, install failed).
  class SetupError < Error; end

  # The load engine could not run, or returned something unusable.
  class EngineError < Error; end

  # The run was interrupted (Ctrl-C, SIGTERM). Carries what was measured
  # before the interruption, if anything.
  class Interrupted < Error
    attr_reader :partial_result

    def initialize(message = "interrupted", partial_result: nil)
      super(message)
      @partial_result = partial_result
    end
  end
end
