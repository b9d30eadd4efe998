# frozen_string_literal: true

require_relative "lib/rackbench/version"

Gem::Specification.new do |spec|
  spec.name = "rackbench"
  spec.version = Rackbench::VERSION
  spec.authors = ["rackbench developers"]
  spec.summary = "A benchmarking lab for Ruby web stacks, with its own native HTTP load engine"
  spec.description = <<~TEXT
    rackbench runs whole experiments (rubies x servers x apps x processes x threads) in
    a seeded random order, drives load with a native C engine that times every request,
    stores every trial as it finishes and reports ratios with confidence intervals.
  TEXT
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.1"

  spec.files = Dir["lib/**/*.{rb,yml}", "ext/**/*.{c,h,rb}", "apps/**/*", "exe/*", "doc/*.md", "README.md", "CHANGELOG.md"]
  spec.bindir = "exe"
  spec.executables = ["rackbench"]
  spec.require_paths = ["lib"]
  # Builds the standalone load engine; `make install` puts it in lib/.
  spec.extensions = ["ext/rackbench_engine/extconf.rb"]
  spec.metadata["rubygems_mfa_required"] = "true"

  spec.add_dependency "sequel", "~> 5.0"
  # The PostgreSQL store and the fleet's queue (--store postgres://..., rackbench worker).
  spec.add_dependency "pg", ">= 1.2"
  spec.add_dependency "sqlite3", ">= 1.4"
  spec.add_dependency "terminal-table", ">= 3.0"
  # Vega, Vega-Lite and vega-embed JavaScript, inlined into the HTML report
  # (0.4 is the newest that supports Ruby 3.1; 0.5 needs 3.2, 0.6 needs 3.3).
  spec.add_dependency "vega", ">= 0.4"
  # The Atom feed of regressions (rackbench publish), written and read with the
  # rss gem (Ruby's own RSS and Atom library, a bundled gem since Ruby 3.0).
  spec.add_dependency "rss", ">= 0.2"
end
