# frozen_string_literal: true

module Rackbench
  module Text
    # How many columns a command's output may use: the terminal's width
    # when it writes to one, NOT_A_TERMINAL columns when it writes to a
    # pipe or a file (CI logs, `| less`, a captured report), and no limit
    # with `--wide` (every cell whole, as `--json` gives them).
    module Width
      # A pipe has no width; 100 columns read well in a CI log, a pull
      # request comment and a 2-pane editor alike.
      NOT_A_TERMINAL = 100
      # A terminal that cannot say its width (an old serial console).
      UNKNOWN_TERMINAL = 80

      module_function

      # The width for output written to +io+ (nil: no limit).
      #
      # :wide :: no limit (default: false)
      # :env :: where COLUMNS is read (default: ENV): a smaller COLUMNS narrows a pipe's width, and a
      #         terminal that reports no size is taken at COLUMNS
      def for(io, wide: false, env: ENV)
        return nil if wide

        columns = Integer(env["COLUMNS"].to_s, exception: false)
        columns = nil unless columns&.positive?
        return [columns || NOT_A_TERMINAL, NOT_A_TERMINAL].min unless io.respond_to?(:tty?) && io.tty?

        terminal_columns(io) || columns || UNKNOWN_TERMINAL
      end

      def terminal_columns(io)
        require "io/console"
        columns = io.winsize[1]
        columns.positive? ? columns : nil
      rescue NoMethodError, SystemCallError, IOError
        nil
      end
      private_class_method :terminal_columns
    end
  end
end
