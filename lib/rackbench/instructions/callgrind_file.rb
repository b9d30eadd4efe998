# frozen_string_literal: true

module Rackbench
  module Instructions
    # One of callgrind's output files read (the format is callgrind's own,
    # "Callgrind Format Specification" in valgrind's manual): the process
    # (pid, command), its instructions in total, and each function's self
    # cost (the instructions executed in the function's own code, its
    # callees' left out: what callgrind_annotate lists by default). Only
    # what a report needs is read; lines it does not know are skipped.
    #
    # Name compression is resolved ("fn=(12) name" defines 12, "fn=(12)"
    # refers to it), and the cost line after a "calls=" line is the call's
    # inclusive cost, which belongs to the callee and is not the caller's
    # own: it is kept as an edge of the call graph (#calls), from the
    # function that made the call to the one called, with the number of
    # calls.
    #
    # Every event of the file is read (#events): "Ir" alone by default,
    # and with `--cache-sim=yes` the cache simulation's reads, writes and
    # misses (Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw), which Cycles turns
    # into an estimate of cycles.
    class CallgrindFile
      # A function's key: the object file it is in (a library, the ruby
      # executable; "???" when unknown) and its name as callgrind gives it
      # (a symbol, or an address in an object without symbols).
      Function = Struct.new(:object, :name)

      # One edge of the call graph: how many calls the caller made to the
      # callee, and what they cost in all (the callee's code and its
      # callees'), one figure per event.
      Call = Struct.new(:count, :inclusive)

      # pid, command; functions :: Function => self instructions ("Ir")
      attr_reader :pid, :command, :functions
      # The names of the file's events, in its order ("Ir" first for callgrind).
      attr_reader :events
      # Function => [self cost of each event], in #events order.
      attr_reader :self_costs
      # [caller Function, callee Function] => Call.
      attr_reader :calls

      # The parsed file at +path+; raises Error naming a file that is not
      # callgrind's.
      def self.read(path)
        File.open(path, "r:UTF-8") { |io| new(io, path) }
      rescue SystemCallError => e
        raise Error, "cannot read callgrind's output #{path}: #{e.message}"
      end

      # +io+ :: the file's lines; +name+ :: how errors name it
      def initialize(io, name = "callgrind output")
        @name = name
        @names = Hash.new { |hash, kind| hash[kind] = {} }
        @functions = Hash.new(0)
        @self_costs = {}
        @calls = {}
        @totals = nil
        @event_totals = nil
        @events = ["Ir"]
        @event = 0
        @positions = 1
        parse(io)
        @functions.default = nil
        [@functions, @self_costs, @calls, @events].each(&:freeze)
        freeze
      end

      # The instructions of the dump: callgrind's totals line, else the sum
      # of every function's self cost (the same number).
      def total
        @totals || @functions.values.sum
      end

      # Each event's total over the dump: {"Ir" => ..., "Dr" => ...}, from
      # the totals line, else summed over the functions' self costs.
      def event_totals
        sums = @event_totals || @self_costs.values.each_with_object(Array.new(@events.size, 0)) do |costs, acc|
          costs.each_with_index { |c, i| acc[i] += c }
        end
        @events.each_with_index.to_h { |event, i| [event, sums[i].to_i] }
      end

      # Whether the dump is empty: the file a process creates at its start,
      # before anything was written to it.
      def empty?
        total.zero? && @functions.empty?
      end

      private

      COST_LINE = /\A[0-9+\-*]/
      # "fn=(12) name", "fn=(12)", "fn=name"
      NAMED = /\A(ob|fl|fi|fe|fn|cob|cfi|cfl|cfn)=(?:\((\d+)\))?\s*(.*)\z/

      def parse(io)
        state = { object: "???", function: nil, call: nil, callee_object: nil, callee: nil }
        io.each_line do |raw|
          @any = true
          line = raw.chomp
          next if line.empty? || line.start_with?("#")

          if line.match?(COST_LINE) then cost_line(state, line)
          elsif (m = NAMED.match(line)) then named(state, *m.captures)
          elsif line.start_with?("calls=") then state[:call] = line.split("=", 2).last.split.first.to_i
          else header(line)
          end
        end
        # A process creates its file as it starts and writes it at a dump:
        # an empty file is a process that dumped nothing yet.
        return unless @any && @functions.empty? && @totals.nil? && !@seen_format

        raise Error, "#{@name} is not callgrind's output (no function found)"
      end

      # A cost line: the function's own cost, or, right after a "calls="
      # line, the call's inclusive cost (the callee's, not this function's).
      def cost_line(state, line)
        function = state[:function]
        if state[:call]
          add_call(function, state, line) if function && state[:callee]
          state[:call] = nil
          state[:callee_object] = nil
        elsif function
          add(function, line)
        end
      end

      def named(state, kind, id, text)
        value = resolve(kind, id, text)
        case kind
        when "ob" then state[:object] = value
        when "fn" then state[:function] = Function.new(state[:object], value).freeze
        when "cob" then state[:callee_object] = value
        when "cfn" then state[:callee] = value
        end
      end

      # The header lines a report reads.
      def header(line)
        key, value = line.split(":", 2)
        return unless value

        case key
        when "version", "creator" then @seen_format = true
        when "pid" then @pid = Integer(value.strip, 10)
        when "cmd" then @command = value.strip
        when "positions" then @positions = [value.split.size, 1].max
        when "events"
          @seen_format = true
          @events = value.split
          @event = @events.index("Ir") || 0
        when "totals", "summary"
          figures = value.split.map(&:to_i)
          @event_totals = figures
          @totals = figures[@event].to_i
        end
      rescue ArgumentError
        nil
      end

      # A name given with its id defines it; an id alone refers to it.
      def resolve(kind, id, text)
        table = @names[kind.sub(/\Ac/, "").sub(/\A(fi|fe)\z/, "fl")]
        return text if id.nil?
        return table[id] = text unless text.empty?

        table.fetch(id) { "(#{kind} #{id})" }
      end

      # The costs of a cost line, one per event: after its position
      # columns; an event left out at the end costs 0.
      def costs(line)
        fields = line.split
        Array.new(@events.size) { |i| fields[@positions + i].to_i }
      end

      def add(function, line)
        costs = costs(line)
        @functions[function] += costs[@event]
        sums = (@self_costs[function] ||= Array.new(@events.size, 0))
        costs.each_with_index { |c, i| sums[i] += c }
      end

      # The callee's object is the caller's unless a "cob=" line said.
      def add_call(function, state, line)
        callee = Function.new(state[:callee_object] || state[:object], state[:callee]).freeze
        call = (@calls[[function, callee]] ||= Call.new(0, Array.new(@events.size, 0)))
        call.count += state[:call]
        costs(line).each_with_index { |c, i| call.inclusive[i] += c }
      end
    end
  end
end
