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
    # own: it is kept as an edge of the call graph (#calls).
    class CallgrindFile
      # A function's key: the object file it is in (a library, the ruby
      # executable; "???" when unknown) and its name as callgrind gives it
      # (a symbol, or an address in an object without symbols).
      Function = Struct.new(:object, :name)

      # One edge of the call graph: how many calls the caller made to the
      # callee, and what they cost in all (the callee's code and its
      # callees'), one figure per event ("Ir" alone here).
      Call = Struct.new(:count, :inclusive)

      attr_reader :pid, :command, :functions
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
        @calls = {}
        @totals = nil
        @event = 0
        parse(io)
        @functions.default = nil
        @functions.freeze
        @calls.freeze
        freeze
      end

      # The instructions of the dump: callgrind's totals line, else the sum
      # of every function's self cost (the same number).
      def total
        @totals || @functions.values.sum
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
        object = "???"
        function = nil
        call = nil # [count, callee's object, callee] after a "calls=" line
        callee_object = callee = nil
        io.each_line do |raw|
          @any = true
          line = raw.chomp
          next if line.empty? || line.start_with?("#")

          if line.match?(COST_LINE)
            # A call's inclusive cost is the callee's, not this function's.
            if call
              add_call(function, Function.new(call[1] || object, call[2]).freeze, call[0], line) if function && call[2]
            elsif function
              add(function, line)
            end
            call = nil
          elsif (m = NAMED.match(line))
            kind, id, text = m.captures
            value = resolve(kind, id, text)
            case kind
            when "ob" then object = value
            when "fn" then function = Function.new(object, value).freeze
            when "cob" then callee_object = value
            when "cfn" then callee = value
            end
          elsif line.start_with?("calls=")
            call = [line.split("=", 2).last.to_i, callee_object, callee]
            callee_object = nil
          else
            header(line)
          end
        end
        # A process creates its file as it starts and writes it at a dump:
        # an empty file is a process that dumped nothing yet.
        return unless @any && @functions.empty? && @totals.nil? && !@seen_format

        raise Error, "#{@name} is not callgrind's output (no function found)"
      end

      # The header lines a report reads.
      def header(line)
        key, value = line.split(":", 2)
        return unless value

        case key
        when "version", "creator" then @seen_format = true
        when "pid" then @pid = Integer(value.strip, 10)
        when "cmd" then @command = value.strip
        when "events"
          @seen_format = true
          events = value.split
          @event = events.index("Ir") || 0
        when "totals", "summary" then @totals = value.split[@event].to_i
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

      # A cost line: its position, then the costs of each event.
      def add(function, line)
        fields = line.split
        cost = fields[1 + @event]
        @functions[function] += cost.to_i if cost
      end

      # A call's cost line: the callee's inclusive cost for +count+ calls.
      def add_call(function, callee, count, line)
        edge = (@calls[[function, callee]] ||= Call.new(0, [0]))
        edge.count += count
        edge.inclusive[0] += line.split[1 + @event].to_i
      end
    end
  end
end
