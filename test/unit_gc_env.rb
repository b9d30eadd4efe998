# frozen_string_literal: true

# The unit tier's rubies start with a larger heap and malloc limits: each
# group allocates hundreds of megabytes over its run and spent 10% of its
# CPU in the collector (marking and sweeping: bench/unit_cpu.rb
# --stackprof); with these the tier's CPU fell from 40.6 to 37.4 s at the
# same load (doc/performance.md). The unit tier starts no process, so no
# server or tool of a test sees them: only the tests' own ruby. Used by
# `rake test:unit` and bench/unit_cpu.rb, so that the bench measures the
# tier as it runs.
UNIT_GC_ENV = { "RUBY_GC_HEAP_INIT_SLOTS" => "400000", "RUBY_GC_MALLOC_LIMIT" => (64 * 1024 * 1024).to_s,
                "RUBY_GC_OLDMALLOC_LIMIT" => (128 * 1024 * 1024).to_s }.freeze
