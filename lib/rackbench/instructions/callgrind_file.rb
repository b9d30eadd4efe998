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
    # own.
    class CallgrindFile
      # A function's key: the object file it is in (a library, the ruby
      # executable; "???" when unknown) and its name as callgrind gives it
      # (a symbol, or an address in an object without symbols).
      Function = Struct.new(:object, :name)

      attr_reader :pid, :command, :functions

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
        @totals = nil
        @event = 0
        parse(io)
        @functions.default = nil
        @functions.freeze
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
        after_call = false
        io.each_line do |raw|
          @any = true
          line = raw.chomp
          next if line.empty? || line.start_with?("#")

          if line.match?(COST_LINE)
            # A call's inclusive cost is the callee's, not this function's.
            add(function, line) if function && !after_call
            after_call = false
          elsif (m = NAMED.match(line))
            kind, id, text = m.captures
            value = resolve(kind, id, text)
            case kind
            when "ob" then object = value
            when "fn" then function = Function.new(object, value).freeze
            end
          elsif line.start_with?("calls=")
            after_call = true
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
    end
  end
end
