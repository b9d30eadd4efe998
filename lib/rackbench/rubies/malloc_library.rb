# frozen_string_literal: true

module Rackbench
  module Rubies
    # Where the system's jemalloc is, for a variant's <tt>malloc: jemalloc</tt>
    # (Variant): the shared object of Debian's libjemalloc2 (and of the
    # distributions that use the same file name), in the first of the
    # library directories where it exists.
    module MallocLibrary
      JEMALLOC_FILE = "libjemalloc.so.2"
      # Debian and Ubuntu put it under their multiarch directory
      # (/usr/lib/x86_64-linux-gnu), Fedora and Arch under /usr/lib64 or
      # /usr/lib.
      DIRS = ["/usr/lib/*-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"].freeze

      module_function

      # The real path of libjemalloc.so.2, or nil when it is not installed.
      def jemalloc(dirs: DIRS)
        dirs.each do |pattern|
          Dir.glob(File.join(pattern, JEMALLOC_FILE)).sort.each do |path|
            return File.realpath(path) if File.file?(path)
          end
        end
        nil
      end

      # What to do when jemalloc is missing, in one line.
      def missing_text(dirs: DIRS)
        "#{JEMALLOC_FILE} is not installed (looked in #{dirs.join(", ")}); install Debian's libjemalloc2 " \
          "(apt-get install libjemalloc2) or give the library in env: { LD_PRELOAD: /path/to/libjemalloc.so }"
      end
    end
  end
end
