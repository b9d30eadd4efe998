# frozen_string_literal: true

require "etc"
require "json"
require "set"
require_relative "errors"
require_relative "process/pid_alive"
require_relative "version"
# Declared before its parts load: they reopen it, and must not trigger the
# autoload of this very file.
module Rackbench
  class Store; end
end
require_relative "store/connection"
require_relative "store/template"
require_relative "store/schema"
require_relative "store/record_codec"
require_relative "store/history"
require_relative "store/copy"

module Rackbench
  # The results database: experiments, their trials and each `rackbench run`
  # of them (doc/store.md has every column and its unit). SQLite in a results
  # directory by default; any database URL Sequel understands through the
  # same code.
  #
  # Each trial is written in its own transaction and is on disk when
  # save_trial returns. Nothing here modifies a stored trial or loses one:
  # the only writes are the inserts and updates the methods below name, the
  # move of a failed trial to the history when its retry is stored (Store::
  # History), and a schema migration, which reshapes rows without losing a
  # figure.
  #
  #   Rackbench::Store.open("rackbench-results") do |store|
  #     id = store.find_or_create_experiment(name: "quick", fingerprint: fp, seed: 1,
  #                                          batches: 3, source_text: yaml, environment: env)
  #     store.save_trial(id, record) unless store.finished_keys(id).include?(record.key) # a Trial::Record
  #     store.trials(id)    # => [Trial::Record, ...], as they were saved
  #   end
  class Store
    include History

    # Any problem with the results database, as one line naming it.
    class Error < Rackbench::Error; end

    # A trial whose key the experiment already holds. Resume skips finished
    # trials before running them, so this means a bug, not a retry.
    class DuplicateTrial < Error; end

    RUN_END_STATUSES = %w[finished interrupted failed].freeze
    EXPERIMENT_COLUMNS = %i[id name fingerprint seed batches source_text created_at finished_at
                            rackbench_version environment config_keys labels].freeze

    # Opens (creating if needed) the results database at +target+: a results
    # directory, which gets a +results.db+ SQLite file, or a database URL
    # (+sqlite://path+, or +postgres://user@host:port/database+: the same
    # schema on a server the hosts of a fleet share). The schema is created
    # or upgraded on the way. With a block, yields the store and closes it
    # afterwards, returning the block's value.
    #
    # :upgrade :: false refuses a database whose schema is not this
    #             rackbench's instead of upgrading it (Schema.migrate!)
    #             (default: true)
    #
    # Raises Store::Error when the directory cannot be created or written,
    # the server cannot be reached, or the database is not a rackbench
    # results database.
    def self.open(target, upgrade: true)
      store = new(target, upgrade: upgrade)
      return store unless block_given?

      begin
        yield store
      ensure
        store.close
      end
    end

    # The database file's path, or its URL without the password.
    attr_reader :location

    # See Store.open.
    def initialize(target, upgrade: true)
      # Only a store that may create the schema starts from the template:
      # upgrade: false refuses a database without one.
      @db, @location = Connection.connect(target, template: upgrade)
      guard("open") { Schema.migrate!(@db, @location, upgrade: upgrade) }
    rescue StandardError
      @db&.disconnect
      raise
    end

    # The Sequel::Database, for tools and tests that need plain SQL; the
    # methods below are the interface.
    def db
      raise Error, "#{location} is closed" if @db.nil?

      @db
    end

    # Whether the database is a PostgreSQL server's (what a fleet shares).
    def postgres?
      db.database_type == :postgres
    end

    # Disconnects. Safe to call twice; the store cannot be used afterwards.
    def close
      @db&.disconnect
      @db = nil
    end

    # The id of the experiment stored under +name+ and +fingerprint+,
    # creating it first when there is none (so a resumed run finds the
    # experiment it started). The other attributes are only written on
    # creation:
    #
    # :seed :: the seed of the trial order
    # :batches :: number of batches planned
    # :source_text :: the experiment file's text, as read
    # :environment :: Hash from MachineEnv.capture (stored as JSON)
    # :config_keys :: the configurations' keys in the source's order, which
    #                 the report lists them in (default: nil)
    # :labels :: what the run measured (Labels#to_h: the --label pairs and
    #            the git revisions), part of the experiment's identity, so
    #            +fingerprint+ must already include it (Labels#fingerprint)
    #            (default: nil: none)
    def find_or_create_experiment(name:, fingerprint:, seed:, batches:, source_text:, environment:, config_keys: nil,
                                  labels: nil)
      experiments = db[:experiments]
      guard("record experiment #{name}") do
        # :immediate takes SQLite's write lock first, so two runners of one
        # experiment cannot both insert it.
        db.transaction(mode: :immediate) do
          experiments.where(name: name, fingerprint: fingerprint).get(:id) ||
            experiments.insert(name: name, fingerprint: fingerprint, seed: seed, batches: batches,
                               source_text: source_text, created_at: Time.now,
                               rackbench_version: Rackbench::VERSION,
                               environment: encode_json(environment, "experiment #{name}: environment"),
                               config_keys: encode_json(config_keys, "experiment #{name}: configurations"),
                               labels: encode_json(labels, "experiment #{name}: labels"))
        end
      rescue Sequel::UniqueConstraintViolation
        # PostgreSQL takes no lock up front: another host inserted it first.
        experiments.where(name: name, fingerprint: fingerprint).get(:id)
      end
    end

    # Adds +revisions+ (Labels' revision Hashes) to the labels of the
    # experiment with +id+, in one transaction: a fleet's worker names the
    # commit of a ruby it built, which the submitter could not know. A
    # revision of the same kind and name already there stays; the
    # experiment's fingerprint does not change.
    def add_experiment_revisions(id, revisions)
      experiments = db[:experiments]
      guard("label experiment #{id}") do
        db.transaction do
          row = experiments.where(id: id).for_update.first
          labels = decode_json(row && row[:labels]) || { "given" => {}, "revisions" => [] }
          known = labels.fetch("revisions", []).map { |r| r.values_at("of", "name") }
          fresh = revisions.reject { |r| known.include?(r.values_at("of", "name")) }
          next if fresh.empty?

          labels["revisions"] = labels.fetch("revisions", []) + fresh
          experiments.where(id: id).update(labels: encode_json(labels, "experiment #{id}: labels"))
        end
      end
    end

    # The experiment with +id+ as a Hash (environment, configuration keys
    # and labels decoded), or nil.
    def experiment(id)
      row = guard("read experiment #{id}") { db[:experiments].where(id: id).first }
      row && decode_experiment(row)
    end

    # The most recently created experiment, of that +name+ when given, or
    # nil when there is none.
    def latest_experiment(name: nil)
      dataset = db[:experiments].reverse(:id)
      dataset = dataset.where(name: name) if name
      row = guard("read experiments") { dataset.first }
      row && decode_experiment(row)
    end

    # Every experiment, oldest first, as Hashes with the environment decoded.
    # (#experiment says what each Hash holds.)
    def experiments
      guard("read experiments") { db[:experiments].order(:id).all }.map { |row| decode_experiment(row) }
    end

    # The Set of trial keys stored for the experiment, failed ones included:
    # resume runs only the plan's trials whose key is not in it.
    def finished_keys(experiment_id)
      guard("read trials") { db[:trials].where(experiment_id: experiment_id).select_map(:key) }.to_set
    end

    # Stores one Trial::Record in its own transaction and returns its id;
    # the row is on disk when this returns. A record whose attempt is above
    # 1 (a retried failure) replaces the stored failed attempt before it,
    # which moves to the trial history in the same transaction (History).
    #
    # :earlier_log_path :: for a retry, where the earlier attempt's log was
    #                      kept (its stored log_path is replaced) (default: nil)
    # :replace_any :: a retry replaces the earlier attempt whatever its
    #                 status, not only a failure (default: false)
    #
    # Raises DuplicateTrial when the key is already stored (for a first
    # attempt), Store::Error when the database cannot take the row (disk
    # full, ...) or a retry does not follow a stored failed attempt,
    # ArgumentError for a document that cannot be stored as JSON.
    def save_trial(experiment_id, record, earlier_log_path: nil, replace_any: false)
      row = RecordCodec.encode(experiment_id, record)
      return supersede(experiment_id, record, row, earlier_log_path, replace_any) if record.attempt > 1

      trials = db[:trials]
      db.transaction { trials.insert(row) }
    rescue Sequel::UniqueConstraintViolation
      raise DuplicateTrial, "trial #{row[:key]} is already stored for experiment #{experiment_id} in #{location}"
    rescue Sequel::ForeignKeyConstraintViolation
      raise Error, "cannot save trial #{row[:key]}: #{location} has no experiment #{experiment_id}"
    rescue Sequel::DatabaseError => e
      raise Error, "cannot save trial #{row[:key]} to #{location}: #{Connection.reason(e)}"
    end

    # Stored trials, of one experiment or of all, in the order they were
    # saved, as Trial::Records: the latest attempt at each key (the earlier
    # attempts of retried failures are #earlier_attempts).
    #
    # :result :: include each trial's result document (the engine's, with
    #            its histogram and timelines: the largest column by far;
    #            without it, the figures read from it are nil) (default: true)
    def trials(experiment_id = nil, result: true)
      columns = [:id, *RecordCodec::COLUMNS]
      columns -= RecordCodec::LARGE unless result
      dataset = db[:trials].select(*columns).order(:id)
      dataset = dataset.where(experiment_id: experiment_id) if experiment_id
      guard("read trials") { dataset.all }.map { |row| RecordCodec.decode(row) }
    end

    # Records the start of a `rackbench run` of the experiment and returns
    # the run's id. Runs of this experiment left "running" by a process of
    # this host that no longer exists (kill -9, power cut) are marked
    # "interrupted" first.
    #
    # :resumed :: whether this run continues the experiment (--resume)
    # :environment :: MachineEnv.capture at this run's start (default: nil)
    def start_run(experiment_id, resumed:, environment: nil)
      runs = db[:runs]
      hostname = Etc.uname[:nodename]
      guard("record a run") do
        db.transaction(mode: :immediate) do
          runs.where(experiment_id: experiment_id, status: "running", hostname: hostname).select_map(%i[id pid])
              .each { |id, pid| runs.where(id: id).update(status: "interrupted") unless process_alive?(pid) }
          runs.insert(experiment_id: experiment_id, started_at: Time.now, status: "running",
                      resumed: resumed ? true : false, hostname: hostname, pid: Process.pid,
                      environment: encode_json(environment, "run environment"))
        end
      end
    end

    # Records how run +run_id+ ended: +status+ is "finished" (every planned
    # trial is stored, which also marks the experiment finished),
    # "interrupted" or "failed". Raises Store::Error when the run is not
    # running.
    #
    # :experiment_done :: false keeps a "finished" run from marking the
    #                     experiment finished (a fleet worker's run of one
    #                     batch: the queue marks it when its last batch is
    #                     done) (default: true)
    def finish_run(run_id, status, experiment_done: true)
      unless RUN_END_STATUSES.include?(status)
        raise ArgumentError, "run status is #{status.inspect}, expected one of #{RUN_END_STATUSES.join(", ")}"
      end

      guard("record the end of run #{run_id}") do
        db.transaction do
          now = Time.now
          run = db[:runs].where(id: run_id).first
          raise Error, "#{location} has no run #{run_id}" unless run
          raise Error, "run #{run_id} already ended (#{run[:status]})" unless run[:status] == "running"

          db[:runs].where(id: run_id).update(status: status, finished_at: now)
          if status == "finished" && experiment_done
            db[:experiments].where(id: run[:experiment_id], finished_at: nil).update(finished_at: now)
          end
        end
      end
      nil
    end

    # The runs of one experiment or of all, oldest first (environment decoded).
    def runs(experiment_id = nil)
      dataset = db[:runs].order(:id)
      dataset = dataset.where(experiment_id: experiment_id) if experiment_id
      guard("read runs") { dataset.all }.map { |row| row.merge(environment: decode_json(row[:environment])) }
    end

    private

    # Runs the block, turning a database failure into one Store::Error line.
    def guard(action)
      yield
    rescue Sequel::DatabaseError => e
      raise Error, "cannot #{action} in #{location}: #{Connection.reason(e)}"
    end

    def decode_experiment(row)
      row.merge(environment: decode_json(row[:environment]), config_keys: decode_json(row[:config_keys]),
                labels: decode_json(row[:labels]))
    end

    def encode_json(value, what)
      value.nil? ? nil : JSON.generate(value)
    rescue JSON::GeneratorError => e
      raise ArgumentError, "#{what} cannot be stored as JSON (#{e.message.lines.first.strip})"
    end

    def decode_json(text)
      text.nil? ? nil : JSON.parse(text)
    rescue JSON::ParserError
      raise Error, "#{location} holds invalid JSON where an environment belongs; the database is damaged"
    end

    def process_alive?(pid)
      PidAlive.call(pid)
    end
  end
end
