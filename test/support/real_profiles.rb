# frozen_string_literal: true

require "json"
require "stackprof"

# Real StackProf results made in the test process, for the profile tests.
# Object mode with interval 1 samples every allocation, so the figures are
# known exactly, whatever the machine's speed: ProfileWork#outer allocates
# +outer+ arrays itself and calls #inner, which allocates +inner+.
module RealProfiles
  # The code profiled: its frame names are what the tests look for.
  class ProfileWork
    # Loops without blocks, so the allocations are the methods' own frames.
    def outer(outer, inner)
      i = 0
      while i < outer
        last = [i] # one Array, allocated by the method itself (no C call)
        i += 1
      end
      inner(inner)
      last
    end

    def inner(count)
      i = 0
      while i < count
        last = [i]
        i += 1
      end
      last
    end

    # Recursion, for totals that must count a frame once per sample.
    def recurse(depth, count)
      return inner(count) if depth.zero?

      recurse(depth - 1, count)
    end
  end

  module_function

  # StackProf.results (raw) of the block, in object mode.
  def objects(&block)
    StackProf.run(mode: :object, interval: 1, raw: true, &block)
  end

  # StackProf.results of ProfileWork#outer(outer, inner).
  def work(outer: 300, inner: 700)
    work = ProfileWork.new
    objects { work.outer(outer, inner) }
  end

  # Writes results as agent/profile.rb does; returns the path.
  def dump(dir, pid, results)
    path = File.join(dir, "#{pid}.stackprof.dump")
    File.binwrite(path, Marshal.dump(results))
    path
  end

  # The self samples of the frame named name in profile (a Merged).
  def self_samples(profile, name)
    Rackbench::Profile::TopFrames.call(profile).find { |row| row.name == name }&.self_samples
  end
end
