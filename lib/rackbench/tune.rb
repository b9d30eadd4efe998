# frozen_string_literal: true

require_relative "tune/settings"
require_relative "tune/memory_model"
require_relative "tune/scorer"
require_relative "tune/knee"
require_relative "tune/search"
require_relative "tune/analysis"
require_relative "tune/terminal"
require_relative "tune/html_page"

module Rackbench
  # `rackbench tune`: the best processes × threads of an app on one or more
  # servers within a memory budget (PSS of the whole server tree) and a
  # latency target, every step an ordinary stored experiment.
  #
  #   steps = Runner::Steps.new(results_dir: "rackbench-results")
  #   search = Tune::Search.new(Experiment.load("tune.yml"), steps: steps)
  #   analysis = Tune::Analysis.new(search.run, settings: search.settings, experiment: search.experiment)
  #   puts Tune::Terminal.new(analysis.to_h).render
  #
  # Search runs the pilot (MemoryModel) and the candidates that fit;
  # Analysis scores them (Scorer), finds the knee (Knee), the best and the
  # memory-matched comparisons; Terminal and HtmlPage draw its document.
  # doc/methodology.md ("Tuning") says why each choice.
  module Tune
  end
end
