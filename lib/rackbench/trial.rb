# frozen_string_literal: true

module Rackbench
  # Kinds of trial, registered like server adapters: each kind lives in
  # lib/rackbench/trial/NAME.rb and registers itself under NAME, so adding a
  # kind of trial is one file and its registration (doc/architecture.md).
  # The runner plans, orders, stores and reports every kind alike; a kind
  # only knows how to run one trial of a configuration and how to read its
  # result.
  #
  # Shipped kinds:
  # http :: boot an app server, prove what it runs, drive HTTP load with the engine (Trial::Http)
  # script :: run a benchmark script under each ruby and read its JSON (Trial::Script; rackbench micro)
  # ws :: an HTTP trial whose measurement is the engine's WebSocket run (Trial::Ws; load.workload connect, echo, broadcast)
  #
  # == The kind interface
  #
  # A kind is a class (a Trial::Kind subclass) whose instances run the trials
  # of one run; the class itself reads stored results.
  #
  # new(context, **collaborators) ::
  #   context is a Trial::Context (the resolved ruby variants, the CPU
  #   layout, the results directory, the seed, deadlines, where to print);
  #   collaborators are what the kind drives (servers, the load engine, a
  #   sampler...), injected so that tests run it against fakes.
  # unsupported_reason(config, variant) ::
  #   nil when the configuration can run on the variant, else a one-line
  #   reason: the plan leaves it out up front.
  # run(trial) ::
  #   runs one Experiment::Plan::Trial and returns its Trial::Record; a
  #   failure is a record with status "failed" and the reason. Only
  #   Interrupt and Interrupted escape.
  # announce ::
  #   lines for the start of a run (where things are pinned), or [].
  # check! ::
  #   raises ConfigError before anything runs when the source cannot run
  #   on this machine (a variable it passes from the shell is missing).
  # Kind.reading ::
  #   the module that reads a stored record's figures (Trial::Reading).
  module Trial
    autoload :Context, File.expand_path("trial/context", __dir__)
    autoload :Http, File.expand_path("trial/http", __dir__)
    autoload :Script, File.expand_path("trial/script", __dir__)
    autoload :Ws, File.expand_path("trial/ws", __dir__)
    autoload :Kind, File.expand_path("trial/kind", __dir__)
    autoload :Reading, File.expand_path("trial/reading", __dir__)
    autoload :Record, File.expand_path("trial/record", __dir__)
    autoload :ServerEnv, File.expand_path("trial/server_env", __dir__)
    autoload :Identity, File.expand_path("trial/identity", __dir__)

    @kinds = {}

    class << self
      # Registers klass as the kind called name.
      def register(name, klass)
        @kinds[name.to_s] = klass
      end

      # The kind class registered as name (loading trial/NAME.rb when it is
      # a shipped kind); ConfigError naming the known kinds otherwise.
      def fetch(name)
        key = name.to_s
        load_kind(key) unless @kinds.key?(key)
        @kinds.fetch(key) { raise ConfigError, "unknown kind of trial #{key.inspect} (known: #{names.join(", ")})" }
      end

      # Every shipped kind's name, sorted.
      def names
        kind_files.each { |path| require path }
        @kinds.keys.sort
      end

      private

      def kind_files
        Dir[File.expand_path("trial/*.rb", __dir__)].reject do |path|
          %w[context identity kind reading record server_env].include?(File.basename(path, ".rb"))
        end
      end

      def load_kind(key)
        path = kind_files.find { |file| File.basename(file, ".rb") == key }
        require path if path
      end
    end
  end
end
