# frozen_string_literal: true

module Rackbench
  module Trial
    class Http < Kind
      module Companions
        # A WebSocket trial (Trial::Ws): the proof that the booted server
        # serves the app's upgrade itself, and the server's memory idle
        # before the engine starts, the base of its memory per connection.
        #
        # The proof: once the server's processes proved their identity, one
        # upgrade on the workload's path with ?rackbench_proof=1 (WsProbe).
        # A built-in app answers it with the pid of the process that served
        # the upgrade and the server's API it came through; the pid must be
        # one of the server's proven processes, and the API the one the
        # adapter names (Servers::Adapter#websocket). A user's app need
        # only answer the upgrade. What it found joins the identity record
        # ("websocket").
        #
        # The idle memory: the server's process tree (PSS, RSS, processes)
        # after boot, before any client connects; kept as the record's
        # +websocket+ ("idle").
        class Websocket < Companion
          # Its hooks (prove, after_boot, keep) are at no window edge, where
          # order matters: among the last, as the TLS check.
          ORDER = 85

          # :sampler :: called with the booted ServerProcess, returns #start / #stop like Sampler
          #             (default: a Sampler of its tree)
          # :probe :: called with WsProbe.upgrade's keywords (default: WsProbe.upgrade)
          def initialize(setup, sampler: ->(server) { Rackbench::Sampler.new(server.pid, pgid: server.pgid) },
                         probe: WsProbe.method(:upgrade))
            super(setup)
            @sampler = sampler
            @probe = probe
          end

          def part(scene)
            Experiment::WebSocketLoad.websocket?(scene.config.load) ? Part.new(scene, @sampler, @probe) : nil
          end

          # One WebSocket trial's proof and idle sample.
          class Part < Companion::Part
            def initialize(scene, sampler, probe)
              super()
              @scene = scene
              @sampler = sampler
              @probe = probe
            end

            def prove(server, port, identity)
              websocket = @scene.app.websocket
              path = "#{websocket.path_for(@scene.config.load[:workload])}?rackbench_proof=1"
              answer = @probe.call(host: server.host, port: port, path: path, cable: websocket.cable,
                                   timeout_s: [@scene.config.load[:timeout_s].to_f, 10.0].max)
              identity["websocket"] = check(answer, identity, path)
            end

            def after_boot(booted)
              summary = @sampler.call(booted.server).start.stop
              @idle = { "pss_bytes" => summary[:pss_mean_bytes], "rss_bytes" => summary[:rss_mean_bytes],
                        "processes" => summary[:processes_peak] }
            rescue Error, SystemCallError
              @idle = nil # a sample that cannot be taken leaves the memory per connection out
            end

            def keep(facts)
              facts[:websocket] = @idle && { "idle" => @idle }
            end

            private

            # What the upgrade proved, or SetupError: a built-in app's
            # proof names a process of the server and the adapter's API.
            def check(answer, identity, path)
              found = { "path" => path, "protocol" => answer.protocol }
              proof = answer.proof
              unless proof
                return found.merge("proof" => "upgrade answered") unless @scene.app.builtin

                raise SetupError, "the WebSocket upgrade on #{path} was answered without the app's proof of the " \
                                  "process that served it"
              end
              pids = Array(identity["processes"]).map { |process| process["pid"] }
              unless pids.include?(proof["pid"])
                raise SetupError, "the WebSocket upgrade on #{path} was served by pid #{proof["pid"]}, not one of the " \
                                  "server's proven processes (#{pids.join(", ")})"
              end
              expected = @scene.adapter.websocket
              if @scene.app.builtin && !@scene.app.websocket.cable && proof["via"] != expected
                raise SetupError, "the WebSocket upgrade came through #{proof["via"]}, not #{@scene.adapter.name}'s " \
                                  "#{expected}"
              end
              found.merge("proof" => proof)
            end
          end
        end

        Http.companion :websocket, Websocket
      end
    end
  end
end
