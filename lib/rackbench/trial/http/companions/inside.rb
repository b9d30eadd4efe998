# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      module Companions
        # The counting agent inside every server process (agent/inside.rb,
        # `inside: counting`): its variables in the server, and once the
        # window ended, each process's counts collected into the record's
        # +inside+ document (Inside::Collection, Inside::Document). A trial
        # under valgrind runs no agent: nothing of rackbench's is awake in
        # its server during the window.
        class Inside < Companion
          ORDER = 70

          # :collection :: called with Inside::Collection.new's keywords, returns an object whose #collect
          #                returns [counts, missing] (default: Inside::Collection.new)
          def initialize(setup, collection: Http::Inside::Collection.method(:new))
            super(setup)
            @collection = collection
          end

          def part(scene)
            return nil if scene.instructions? && !scene.examining
            return nil unless Http::Inside.mode(setup.source) == Http::Inside::COUNTING

            Part.new(scene, @collection)
          end

          # One trial's agent.
          class Part < Companion::Part
            def initialize(scene, collection)
              super()
              @scene = scene
              @collection = collection
            end

            def env
              { "trial" => Http::Inside.env(Http::Inside::COUNTING) }
            end

            def after_boot(booted)
              @booted = booted
            end

            # The counts, collected from the server's processes before it
            # stops, when a window ended.
            def document(outcome)
              return outcome unless @booted && @scene.window.marked?(:end)

              counts, missing = @collection.call(server: @booted.server, trial_dir: @scene.work_dir,
                                                 identity: @booted.identity).collect
              result = outcome[:result]
              outcome.merge(inside: Http::Inside::Document.build(counts: counts, missing: missing,
                                                                 requests: result["requests"],
                                                                 duration_s: result["duration_s"]))
            end
          end
        end

        Http.companion :inside, Inside
      end
    end
  end
end
