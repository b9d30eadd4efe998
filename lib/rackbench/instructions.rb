# frozen_string_literal: true

module Rackbench
  # Instructions per request (`measure: instructions`): every process of
  # the server runs under valgrind's callgrind with instrumentation off;
  # the runner switches it on in each of them at the window's start edge
  # and off at its end (the engine holds both edges: a window of a fixed
  # count, LoadEngine --hold-fd), then reads each process's count of the
  # window and its per-function costs from callgrind's dump. A count of
  # executed instructions does not depend on what else the machine does:
  # on a shared, noisy machine its batches vary by a tenth of a percent
  # where requests/s varies by tens (doc/methodology.md).
  #
  # An experiment measures time (the default), instructions, or both: then
  # every configuration of every batch runs a time trial and an
  # instructions trial, and the report shows both figures side by side.
  # An instructions trial counts in no time figure (its server ran under
  # valgrind), a time trial in no instructions figure.
  module Instructions
    # The values of the experiment's `measure:` key, in the order a plan
    # and a report list them.
    TIME = "time"
    INSTRUCTIONS = "instructions"
    MEASURES = [TIME, INSTRUCTIONS].freeze

    # What a trial's load_settings say when it ran under valgrind.
    SETTINGS_KEY = "measure"

    # valgrind could not do what the trial needs (switch a process's
    # instrumentation, read its counts): the trial fails with the reason.
    class Error < Rackbench::Error; end

    autoload :Valgrind, File.expand_path("instructions/valgrind", __dir__)
    autoload :Control, File.expand_path("instructions/control", __dir__)
    autoload :CallgrindFile, File.expand_path("instructions/callgrind_file", __dir__)
    autoload :Collection, File.expand_path("instructions/collection", __dir__)
    autoload :Edges, File.expand_path("instructions/edges", __dir__)
    autoload :Support, File.expand_path("instructions/support", __dir__)
    autoload :Answers, File.expand_path("instructions/answers", __dir__)
    autoload :GcEdges, File.expand_path("instructions/gc_edges", __dir__)
    autoload :GcCost, File.expand_path("instructions/gc_cost", __dir__)
    autoload :GcFigure, File.expand_path("instructions/gc_figure", __dir__)
    autoload :GcProbe, File.expand_path("instructions/gc_probe", __dir__)
    autoload :Window, File.expand_path("instructions/window", __dir__)
    autoload :SettingsCheck, File.expand_path("instructions/settings_check", __dir__)
    autoload :CallGraph, File.expand_path("instructions/call_graph", __dir__)
    autoload :Cycles, File.expand_path("instructions/cycles", __dir__)
    autoload :Settings, File.expand_path("instructions/settings", __dir__)

    # Whether +record+ (a Trial::Record) is an instructions trial.
    def self.trial?(record)
      settings = record.load_settings
      settings.is_a?(Hash) && settings[SETTINGS_KEY] == INSTRUCTIONS
    end
  end
end
