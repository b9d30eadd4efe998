# frozen_string_literal: true

require "json"

module Rackbench
  class Store
    # The results database's schema, as an ordered list of migrations written
    # in Sequel's schema DSL (so the same code creates the tables on SQLite and
    # PostgreSQL), and the code that brings any database up to date.
    #
    # Migrations live here in Ruby rather than in a directory Sequel::Migrator
    # would scan, so an installed gem can never miss or misorder a file. The
    # version reached is kept in the table +rackbench_schema+ (one row); a
    # results directory written by an older rackbench is upgraded when opened,
    # one written by a newer rackbench is refused rather than misread.
    #
    # Rules for adding a migration: append, never edit a released one; a
    # migration may reshape what is stored (3 moved every figure into the
    # documents that measured it) but never lose a figure, and stored
    # trials keep their meaning; a test upgrades a database of each
    # released version (test/unit/store_upgrade_test.rb).
    # doc/store.md describes every column and must change with this file.
    module Schema
      VERSION_TABLE = :rackbench_schema

      MIGRATIONS = [
        # 1: experiments, the trials they hold, and each `rackbench run` of them.
        lambda do |db|
          db.create_table(:experiments) do
            primary_key :id
            String :name, null: false
            # Digest of the validated experiment: what it measures, not how it is spelt.
            String :fingerprint, null: false
            Bignum :seed
            Integer :batches
            String :source_text, text: true
            DateTime :created_at, null: false
            DateTime :finished_at
            String :rackbench_version, null: false
            String :environment, text: true # JSON: MachineEnv.capture at creation
            unique %i[name fingerprint]
          end

          db.create_table(:trials) do
            primary_key :id
            foreign_key :experiment_id, :experiments, null: false
            String :key, null: false
            Integer :batch
            Integer :position
            String :ruby
            String :ruby_description, text: true
            String :server
            String :app
            Integer :processes
            Integer :threads
            String :dims, text: true          # JSON
            String :load_settings, text: true # JSON
            String :env, text: true           # JSON
            String :status, null: false
            String :reason, text: true
            DateTime :started_at
            DateTime :finished_at
            Float :boot_s
            Float :warmup_s
            Float :measure_s
            Float :wall_s
            Float :stop_s
            Float :rps
            Bignum :requests
            Bignum :errors
            Float :error_rate
            String :latency_us, text: true    # JSON
            String :engine_result, text: true # JSON, often hundreds of KB
            String :sampler, text: true       # JSON
            Bignum :rss_peak_bytes
            Bignum :pss_peak_bytes
            Float :cpu_user_s
            Float :cpu_system_s
            String :gem_versions, text: true  # JSON
            String :layout, text: true        # JSON
            String :log_path, text: true
            # Resume relies on this: a trial is stored at most once.
            unique %i[experiment_id key]
            constraint(:trials_status_valid, status: %w[ok failed])
          end

          db.create_table(:runs) do
            primary_key :id
            foreign_key :experiment_id, :experiments, null: false
            DateTime :started_at, null: false
            DateTime :finished_at
            String :status, null: false
            TrueClass :resumed, null: false, default: false
            String :hostname
            Integer :pid
            String :environment, text: true # JSON: MachineEnv.capture at this run's start
            index :experiment_id
            constraint(:runs_status_valid, status: %w[running finished interrupted failed])
          end
        end,

        # 2: what really ran (the identity every server process reported)
        # and what else the machine did during the measured window.
        lambda do |db|
          db.alter_table(:trials) do
            add_column :identity, String, text: true # JSON
            add_column :machine, String, text: true  # JSON
          end
        end,

        # 3: one trial record (Trial::Record), every figure stored once. What
        # a trial measured stays in the document that measured it (result:
        # the engine's or the benchmark's JSON) and the sampler's summary
        # (sample); the columns that copied figures out of them go. Every
        # trial says its kind. Experiments keep their configurations' order.
        #
        # The documents are renamed, not copied (they are most of the
        # database). A micro-benchmark's trial is told apart by what only
        # it can be: the app micro-fibers on a "server" that is one of its
        # modes, which no server adapter is named; everything else is HTTP.
        lambda do |db|
          db.alter_table(:trials) do
            add_column :kind, String
            rename_column :engine_result, :result
            rename_column :sampler, :sample
          end
          trials = db[:trials]
          trials.update(kind: "http")
          micro = Sequel.&({ app: "micro-fibers" }, { server: %w[threads processes fibers] })
          # Its setup and teardown were copied out of its document into
          # boot_s and stop_s, and its memory into the peak columns: the
          # document keeps them.
          trials.where(micro).update(kind: "script", boot_s: nil, stop_s: nil, sample: nil)
          Schema.keep_legacy_figures(trials.where(kind: "http"))
          db.alter_table(:trials) do
            %i[rps requests errors error_rate latency_us rss_peak_bytes pss_peak_bytes cpu_user_s cpu_system_s
               warmup_s measure_s].each { |column| drop_column column }
          end
          db.alter_table(:experiments) { add_column :config_keys, String, text: true } # JSON
        end,

        # 4: retried failures (`--resume --retry-failed`). A trial says which
        # attempt at its key it is; +trials+ keeps the latest attempt of each
        # key, so every report reads the latest only, as before. An earlier
        # attempt moves to +trial_history+ in the transaction that stores
        # its successor: kept with every column, never lost. Stored trials
        # are the first attempt of their key.
        lambda do |db|
          db.alter_table(:trials) { add_column :attempt, Integer, null: false, default: 1 }
          db.create_table(:trial_history) do
            primary_key :id
            foreign_key :experiment_id, :experiments, null: false
            Integer :trial_id, null: false # its id in trials, before it was superseded
            DateTime :superseded_at, null: false
            String :key, null: false
            Integer :attempt, null: false
            Integer :batch
            Integer :position
            String :kind
            String :ruby
            String :ruby_description, text: true
            String :server
            String :app
            Integer :processes
            Integer :threads
            String :dims, text: true          # JSON
            String :load_settings, text: true # JSON
            String :env, text: true           # JSON
            String :status, null: false
            String :reason, text: true
            DateTime :started_at
            DateTime :finished_at
            Float :boot_s
            Float :wall_s
            Float :stop_s
            String :result, text: true        # JSON
            String :sample, text: true        # JSON
            String :machine, text: true       # JSON
            String :identity, text: true      # JSON
            String :gem_versions, text: true  # JSON
            String :layout, text: true        # JSON
            String :log_path, text: true
            unique %i[experiment_id key attempt]
          end
        end,

        # 5: what the counting agent saw inside the server over the measured
        # window (Trial::Record#inside: GC, allocations, VM and JIT counters,
        # memory, per process). Stored trials had no agent: NULL.
        lambda do |db|
          db.alter_table(:trials) { add_column :inside, String, text: true }        # JSON
          db.alter_table(:trial_history) { add_column :inside, String, text: true } # JSON
        end,

        # 6: the proxy in front of the server (Trial::Record#proxy: its name
        # and version, its process tree's CPU and memory and its cache's
        # hits and misses over the window). Stored trials had none: NULL.
        lambda do |db|
          db.alter_table(:trials) { add_column :proxy, String, text: true }        # JSON
          db.alter_table(:trial_history) { add_column :proxy, String, text: true } # JSON
        end,

        # 7: what a run measured, in words a series of runs is told apart
        # by (Labels: the --label pairs given and the git revisions of the
        # apps and rubies, taken automatically). Part of the experiment's
        # identity: the same file at another revision is another
        # experiment. Stored experiments had none: NULL.
        lambda do |db|
          db.alter_table(:experiments) { add_column :labels, String, text: true } # JSON
        end,

        # 8: text without a length on PostgreSQL. Sequel's String is
        # varchar(255) there (SQLite ignores the length): a trial's key
        # holds its configuration's dims, which may be longer. Every
        # varchar(255) column of rackbench's tables becomes text; nothing
        # to do on SQLite.
        lambda do |db|
          next unless db.database_type == :postgres

          %i[experiments trials runs trial_history].each do |table|
            columns = db.schema(table).select { |_, info| info[:db_type] == "character varying(255)" }.map(&:first)
            db.alter_table(table) { columns.each { |column| set_column_type column, String, text: true } }
          end
        end,

        # 9: the fleet (doc/fleet.md). Each trial says which host ran it
        # (Trial::Record#host: the runner's host name, or a worker's name)
        # and, when the load engine ran on a host of its own, the network
        # between them (Trial::Record#network: the load host, the server's
        # address, the round trip measured before the trial). Stored trials:
        # NULL. The queue: one row per batch of an experiment sent to a
        # testbed (fleet_batches), claimed whole by one worker
        # (fleet_workers), which beats a heartbeat while it runs it.
        lambda do |db|
          %i[trials trial_history].each do |table|
            db.alter_table(table) do
              add_column :host, String, text: true
              add_column :network, String, text: true # JSON
            end
          end

          db.create_table(:fleet_workers) do
            primary_key :id
            String :name, text: true, null: false     # the host's name, or --name
            String :testbed, text: true, null: false
            Integer :pid
            String :rackbench_version, text: true
            String :status, text: true, null: false   # running, stopped
            DateTime :started_at, null: false
            DateTime :heartbeat_at, null: false
            DateTime :stopped_at
            String :document, text: true              # JSON: the machine, experiments refused and why
            index %i[testbed status]
            constraint(:fleet_workers_status_valid, status: %w[running stopped])
          end

          db.create_table(:fleet_batches) do
            primary_key :id
            foreign_key :experiment_id, :experiments, null: false
            Integer :batch, null: false
            String :testbed, text: true, null: false
            String :state, text: true, null: false    # queued, claimed, done
            # The next claim runs the batch's stored trials again, as later
            # attempts (after its worker died, or --retry-failed).
            TrueClass :rerun, null: false, default: false
            Integer :claims, null: false, default: 0
            foreign_key :worker_id, :fleet_workers
            Integer :run_id                            # the claiming worker's run (runs.id)
            DateTime :queued_at, null: false
            DateTime :claimed_at
            DateTime :heartbeat_at
            DateTime :finished_at
            String :document, text: true              # JSON: where the experiment's file was (base_dir, source)
            unique %i[experiment_id batch]
            index %i[testbed state id]
            constraint(:fleet_batches_state_valid, state: %w[queued claimed done])
          end
        end,

        # 10: an instructions trial's counts (Trial::Record#instructions:
        # callgrind's instructions over the window, per process and per
        # request, and the costliest functions). Stored trials measured
        # time: NULL.
        lambda do |db|
          db.alter_table(:trials) { add_column :instructions, String, text: true }        # JSON
          db.alter_table(:trial_history) { add_column :instructions, String, text: true } # JSON
        end,

        # 11: the app's services (Trial::Record#services: each one's name and
        # version, the restore of its template and the state it left, its
        # process tree's CPU and memory over the window). Stored trials had
        # none: NULL.
        lambda do |db|
          db.alter_table(:trials) { add_column :services, String, text: true }        # JSON
          db.alter_table(:trial_history) { add_column :services, String, text: true } # JSON
        end,
        # 12: the kernel's pressure stall information over the window
        # (Trial::Record#pressure, the pressure companion: the share of the
        # window some task waited for a CPU, memory or I/O). Stored trials
        # had none: NULL.
        lambda do |db|
          db.alter_table(:trials) { add_column :pressure, String, text: true }        # JSON
          db.alter_table(:trial_history) { add_column :pressure, String, text: true } # JSON
        end,
        # 13: what `rackbench publish` keeps (doc/publish.md). Per run, when
        # its figures were summarised and from what (run_summaries), and
        # per run, configuration and figure the summary itself
        # (series_points: the median over the ok batches, its interval, each
        # batch's value), which outlives the trials it came from: `rackbench
        # prune` deletes old runs' trials and keeps these, so a timeline
        # stays whole for years. The regressions found in the series, each
        # with its state (detected, confirmed, fixed, false positive,
        # accepted), and every change of it (regression_events: who, when,
        # why).
        lambda do |db|
          db.create_table(:run_summaries) do
            primary_key :id
            foreign_key :experiment_id, :experiments, null: false, unique: true
            String :source_digest, text: true, null: false # what the points were computed from
            String :status, text: true, null: false        # measured, failed, empty
            String :failure, text: true                    # JSON: why a run measured nothing (a build that failed)
            DateTime :computed_at, null: false
            DateTime :pruned_at                            # when its trials were deleted (rackbench prune)
            constraint(:run_summaries_status_valid, status: %w[measured failed empty])
          end

          db.create_table(:series_points) do
            primary_key :id
            foreign_key :experiment_id, :experiments, null: false
            String :config_id, text: true, null: false
            String :figure, text: true, null: false
            String :dims, text: true # JSON
            Float :median
            Float :ci_low
            Float :ci_high
            Integer :batches, null: false
            Integer :failed, null: false
            String :batch_values, text: true # JSON: each ok batch's value, in batch order
            unique %i[experiment_id config_id figure]
          end

          db.create_table(:regressions) do
            primary_key :id
            String :uid, text: true, null: false, unique: true # the feed's entry id (urn:uuid:...)
            String :series, text: true, null: false            # digest of experiment, machine, configuration, figure
            String :experiment, text: true, null: false
            String :machine, text: true, null: false           # JSON: Report::MachineMatch.key (or the testbed's)
            String :config_id, text: true, null: false
            String :dims, text: true                           # JSON
            String :figure, text: true, null: false
            foreign_key :detected_experiment_id, :experiments, null: false # the run that found it
            foreign_key :step_experiment_id, :experiments, null: false     # the first run at the new level
            foreign_key :good_experiment_id, :experiments                  # the last run before the range
            foreign_key :bad_experiment_id, :experiments, null: false      # the last run the step may be at
            foreign_key :fixed_experiment_id, :experiments                 # the first run back
            String :direction, text: true, null: false # up, down: how the figure moved
            Float :change, null: false                 # the new level against the old, a fraction
            Float :change_low
            Float :change_high
            Float :level_before
            Float :level_after
            Float :threshold                           # the series' one-run threshold when found
            String :rule, text: true                   # default, learned
            String :state, text: true, null: false
            String :state_by, text: true, null: false
            DateTime :state_at, null: false
            String :state_note, text: true
            DateTime :detected_at, null: false
            DateTime :updated_at, null: false
            DateTime :announced_at                     # when the per-regression command accepted it
            String :document, text: true               # JSON: the range's revisions, the runs, a bisect's result
            unique %i[series detected_experiment_id]
            index :state
            constraint(:regressions_state_valid, state: %w[detected confirmed fixed false_positive accepted])
          end

          db.create_table(:regression_events) do
            primary_key :id
            foreign_key :regression_id, :regressions, null: false
            DateTime :at, null: false
            String :event, text: true, null: false # detected, state, update, announced, bisect
            String :state, text: true, null: false # the state after it
            String :by, text: true, null: false
            String :note, text: true
            index :regression_id
          end
        end,
        # 14: a WebSocket trial's server idle before the engine started
        # (Trial::Record#websocket, the websocket companion: its PSS, the
        # base of the memory per connection). Stored trials had none: NULL.
        lambda do |db|
          db.alter_table(:trials) { add_column :websocket, String, text: true }        # JSON
          db.alter_table(:trial_history) { add_column :websocket, String, text: true } # JSON
        end
      ].freeze

      # The schema version this rackbench writes.
      VERSION = MIGRATIONS.size

      module_function

      # Migration 3's care for HTTP rows whose figures were in the copied
      # columns only (rackbench 0.1 always wrote the documents with them, so
      # these are rows written by hand or by a test): a document is built
      # from the columns before they go. The 0.1 errors column counted
      # transport errors and responses other than 2xx/3xx together; it is
      # kept as responses of status "unknown", which count as failed.
      def keep_legacy_figures(http_trials)
        memory = %i[rss_peak_bytes pss_peak_bytes cpu_user_s cpu_system_s]
        http_trials.where(sample: nil).exclude(Sequel.&(*memory.map { |c| { c => nil } }))
                   .select(:id, *memory).all.each do |row|
          sample = row.slice(*memory).compact.transform_keys(&:to_s)
          http_trials.where(id: row[:id]).update(sample: JSON.generate(sample))
        end
        http_trials.where(result: nil).exclude(rps: nil)
                   .select(:id, :rps, :requests, :errors, :latency_us, :warmup_s, :measure_s).all.each do |row|
          result = { "rps" => row[:rps], "requests" => row[:requests], "duration_s" => row[:measure_s],
                     "latency_us" => Schema.parse_json(row[:latency_us]),
                     "warmup" => { "duration_s" => row[:warmup_s] },
                     "status" => row[:errors].to_i.positive? ? { "unknown" => row[:errors] } : {} }
          http_trials.where(id: row[:id]).update(result: JSON.generate(result))
        end
      end

      # A legacy JSON column's value, or nil when it is not JSON.
      def parse_json(text)
        text && JSON.parse(text)
      rescue JSON::ParserError
        nil
      end

      # Brings +db+ up to VERSION inside one transaction, so a crash half-way
      # leaves the previous version intact. +location+ names the database in
      # error messages. Raises Store::Error when +db+ holds tables that are not
      # rackbench's, or was written by a newer rackbench.
      #
      # upgrade: false (a fleet's worker, which shares the database with
      # hosts that may run another rackbench) changes nothing: a database of
      # an older schema, or an empty one, is refused as well, naming the
      # command that upgrades it.
      def migrate!(db, location, upgrade: true)
        # :immediate takes SQLite's write lock before reading the version, so
        # two runners opening a new results directory at once cannot both
        # create the tables (PostgreSQL ignores the option: the advisory
        # lock does the same there, for the hosts of a fleet).
        db.transaction(mode: :immediate) do
          lock_migrations(db)
          current = current_version(db, location, create: upgrade)
          if current > VERSION
            raise Store::Error, "#{location} has results schema version #{current}, newer than this " \
                                "rackbench #{Rackbench::VERSION} understands (#{VERSION}); upgrade rackbench"
          end
          if current.zero? && !upgrade
            raise Store::Error, "#{location} holds no rackbench results yet: create them with rackbench store " \
                                "migrate, or send an experiment with rackbench run --fleet"
          end
          if current < VERSION && !upgrade
            raise Store::Error, "#{location} has results schema version #{current}, older than this rackbench " \
                                "#{Rackbench::VERSION} writes (#{VERSION}); upgrade it with rackbench store " \
                                "migrate (once no older rackbench uses it)"
          end
          MIGRATIONS[current..].each { |migration| migration.call(db) }
          db[VERSION_TABLE].update(version: VERSION) if current < VERSION
        end
      end

      # An arbitrary constant: the key of the PostgreSQL advisory lock that
      # serialises rackbench's schema changes ("rbsc" in ASCII).
      ADVISORY_LOCK_KEY = 0x72627363

      # On PostgreSQL, waits for any other rackbench migrating the same
      # database; the lock ends with the transaction.
      def lock_migrations(db)
        db.get(Sequel.function(:pg_advisory_xact_lock, ADVISORY_LOCK_KEY)) if db.database_type == :postgres
      end

      # The version recorded in +db+; 0 for an empty database (after creating
      # the version table, unless create: false).
      def current_version(db, location, create: true)
        unless db.table_exists?(VERSION_TABLE)
          return 0 unless create

          others = db.tables
          unless others.empty?
            raise Store::Error, "#{location} is not a rackbench results database " \
                                "(it holds other tables: #{others.first(5).join(", ")})"
          end
          db.create_table(VERSION_TABLE) { Integer :version, null: false }
          db[VERSION_TABLE].insert(version: 0)
        end
        db[VERSION_TABLE].for_update.get(:version) ||
          raise(Store::Error, "#{location}: #{VERSION_TABLE} is empty; the database is damaged")
      end
    end
  end
end
