# frozen_string_literal: true

module Rackbench
  module Proxy
    # Finds a proxy's program: on PATH, then in the system directories
    # Debian installs daemons into (/usr/sbin is not on every user's PATH).
    module Binary
      SYSTEM_DIRS = %w[/usr/sbin /sbin /usr/local/sbin].freeze

      module_function

      # The absolute path of the executable named program, or nil. A name
      # with a slash is taken as a path (a test's seam for a missing one).
      #
      # :path :: the PATH to search (default: ENV["PATH"])
      def find(program, path: ENV.fetch("PATH", ""))
        return (File.executable?(program) && !File.directory?(program) ? program : nil) if program.include?("/")

        (path.split(File::PATH_SEPARATOR) + SYSTEM_DIRS).each do |dir|
          candidate = File.join(dir, program)
          return candidate if File.file?(candidate) && File.executable?(candidate)
        end
        nil
      end
    end
  end
end
