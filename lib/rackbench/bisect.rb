# frozen_string_literal: true

require_relative "../rackbench"
require_relative "experiment"
require_relative "gate"

module Rackbench
  # `rackbench bisect EXPERIMENT.yml --good REF --bad REF`: the commit of a
  # ruby built from a git repository, or of an app in one, that made a
  # figure worse (doc/bisect.md). Each commit measured is an ordinary
  # experiment derived from the file (one commit of the subject, the rest
  # as the file says), stored and resumed like any run, and every
  # comparison is judged as `rackbench gate --strict` judges.
  #
  # Settings :: what was asked
  # Git, History :: git itself, and the commits from good to bad
  # Subject :: the ruby or app whose history is walked
  # Worktrees :: an app's commits checked out, one worktree each
  # Derivation :: the step experiments: one commit, or two interleaved
  # Search :: the search (ends, splits, skips, steps), no I/O
  # Judge :: two measured commits compared through the gate
  # Measurements :: each commit's stored runs, batches added on demand
  # Driver :: runs the search over the store, then confirms each step
  # Journal :: the commits whose ruby did not build, not built again
  # Cost :: what a bisection will take, said before it starts
  # Progress :: what it says while it runs
  # Result :: the document; Terminal, Markdown, HtmlPage its views
  module Bisect
    # A value of +figure+ (a Report::BatchFigures::Figure) as the views
    # write it: instructions per request grouped by thousands
    # ("1,242,400"), every other figure as the gate writes it.
    def self.figure_text(figure, value)
      figure.unit == :count && value && value >= 1000 ? Units.count_grouped(value) : figure.format(value)
    end
  end
end

require_relative "bisect/settings"
require_relative "bisect/git"
require_relative "bisect/history"
require_relative "bisect/subject"
require_relative "bisect/worktrees"
require_relative "bisect/search"
require_relative "bisect/derivation"
require_relative "bisect/journal"
require_relative "bisect/judge"
require_relative "bisect/measurements"
require_relative "bisect/driver"
require_relative "bisect/cost"
require_relative "bisect/result"
require_relative "bisect/terminal"
require_relative "bisect/markdown"
require_relative "bisect/html_page"
require_relative "bisect/progress"
require_relative "bisect/summary"
