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

  # A ruby could not be built from source (a patch that does not apply, a
  # missing library, a failed compile); the message names the step and
  # where its log is.
  class BuildError < SetupError; end

  # A booted server does not run what its trial names (another ruby, the
  # JIT off, a variable not set). Carries the identity record, when there
  # is one, so the failed trial stores what really ran.
  class IdentityMismatch < SetupError
    attr_reader :record

    def initialize(message, record: nil)
      super(message)
      @record = record
    end
  end

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
