# frozen_string_literal: true

module Rackbench
  module Instructions
    # Debian's valgrind (bin/setup --all installs it): the callgrind tool an
    # instructions trial's server runs under, and vgdb, through which the
    # runner switches each process's instrumentation at the window's edges.
    #
    # The wrapper (#wrapper) starts the server with instrumentation off:
    # the boot and the warmup run at valgrind's uninstrumented speed and
    # count nothing. It follows every fork (valgrind does that by itself:
    # Puma's, Unicorn's and Pitchfork's workers) and every exec
    # (--trace-children: Passenger's core and the app processes it execs),
    # and each process writes its own files (%p): callgrind's dumps, its
    # log, and vgdb's FIFOs, all in the trial's directory (a prefix of its
    # own, so that two runs on one machine never reach each other's
    # processes).
    class Valgrind
      TOOL = "callgrind"
      # The file names %p expands in: one per process.
      OUT_FILE = "callgrind.%p"
      LOG_FILE = "valgrind.%p.log"
      VGDB_PREFIX = "vgdb"

      # The caches callgrind simulates with `--cache-sim=yes`, the same on
      # every machine: by default valgrind reads them from the CPU, and a
      # virtual machine may report anything (this one reports a 256 MB
      # direct-mapped last level), which would make two machines' cycles
      # incomparable. A common x86 core's: 32 kB 8-way L1s, an 8 MB 16-way
      # last level, 64-byte lines (size,associativity,line size).
      CACHES = { "I1" => "32768,8,64", "D1" => "32768,8,64", "LL" => "8388608,16,64" }.freeze

      # The valgrind found on +path+ (PATH's directories), or one whose
      # #reason says it is missing. +cache_sim+: simulate the caches
      # (the experiment's `instructions: { cache_sim: true }`).
      def self.find(path: ENV.fetch("PATH", ""), cache_sim: false)
        dirs = path.split(File::PATH_SEPARATOR).reject(&:empty?)
        program = dirs.map { |dir| File.join(dir, "valgrind") }.find { |file| File.executable?(file) }
        vgdb = dirs.map { |dir| File.join(dir, "vgdb") }.find { |file| File.executable?(file) }
        new(program: program, vgdb: vgdb, cache_sim: cache_sim)
      end

      attr_reader :program, :vgdb

      # :program, :vgdb :: the executables' paths (nil: not installed)
      # :cache_sim :: run callgrind's cache simulation, for estimated
      #               cycles (Instructions::Cycles) (default: false)
      def initialize(program:, vgdb:, cache_sim: false)
        @program = program
        @vgdb = vgdb
        @cache_sim = cache_sim
      end

      # Whether the servers run with the cache simulation.
      def cache_sim? = @cache_sim

      # Why valgrind cannot be used here, or nil.
      def reason
        return "valgrind is not installed (Debian: apt-get install valgrind; bin/setup --all does)" unless @program
        return "valgrind's vgdb is not installed beside #{@program}" unless @vgdb

        nil
      end

      # "3.19.0", or nil when it cannot be asked.
      def version
        return @version if defined?(@version)

        @version = begin
          out = IO.popen([@program, "--version"], err: File::NULL, &:read).to_s
          out[/\d+(\.\d+)+/]
        rescue SystemCallError
          nil
        end
      end

      # The argv prefix that runs a server under callgrind, its files in
      # +dir+ (the trial's instructions directory).
      def wrapper(dir)
        [@program, "--tool=#{TOOL}", *self.class.options(dir), *(self.class.cache_options if @cache_sim)]
      end

      # The cache simulation's options: on, with the CACHES simulated.
      def self.cache_options
        ["--cache-sim=yes", *CACHES.map { |name, geometry| "--#{name}=#{geometry}" }]
      end

      # Callgrind's options for files in +dir+:
      # --instr-atstart=no :: nothing is counted until the window's edge
      # --trace-children=yes :: processes the server execs run under it too
      # --vgdb=yes :: the runner reaches every process through vgdb
      # --dump-line=no :: per function, not per source line: dumps stay small
      def self.options(dir)
        ["--instr-atstart=no", "--trace-children=yes", "--vgdb=yes", "--vgdb-prefix=#{File.join(dir, VGDB_PREFIX)}",
         "--callgrind-out-file=#{File.join(dir, OUT_FILE)}", "--log-file=#{File.join(dir, LOG_FILE)}",
         "--dump-line=no"]
      end

      # Whether +exe+ (a process's /proc/PID/exe) is a valgrind tool's
      # launcher for callgrind ("callgrind-amd64-linux"): a process running
      # under it.
      def self.tool_exe?(exe)
        !exe.nil? && File.basename(exe).start_with?("#{TOOL}-")
      end
    end
  end
end
