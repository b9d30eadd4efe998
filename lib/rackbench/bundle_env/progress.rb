# frozen_string_literal: true

module Rackbench
  class BundleEnv
    # Says how a `bundle install` is going while it runs, from Bundler's own
    # output lines as they come ("Fetching X 1.0", "Installing X 1.0 with
    # native extensions", "Using X 1.0"): the gem it is at, of about how
    # many when a lockfile said so up front, and the time spent. "About":
    # the lockfile an install starts from lists the gems of every group
    # (Bundler skips those left out) and, seeded from a sibling, another
    # server's gems, but not this server's; the final line has the count.
    # A first install of a big Gemfile takes minutes; silence would look
    # like a hang.
    #
    # At most one line every interval_s (an install that ends sooner shows
    # only its final line, with the duration). On a terminal the line is
    # redrawn in place ("\r"); anywhere else (a file, a pipe, CI) each
    # update is a line of its own, so a log reads top to bottom.
    #
    #   progress = Progress.new(out: $stdout, label: "rails-posts + puma on ruby")
    #   progress.start(total: 87)
    #   progress.line("Installing nokogiri 1.16.0 with native extensions")  # as Bundler prints them
    #   progress.finish(ok: true)
    class Progress
      # "42 s", "3m05s": how every long setup step (a bundle install,
      # Passenger's agent compile) says how long it has been going.
      def self.duration(seconds)
        seconds = seconds.round
        seconds < 60 ? "#{seconds} s" : format("%dm%02ds", seconds / 60, seconds % 60)
      end

      # "Installing puma 6.6.1 with native extensions", "Using nokogiri
      # 1.16.0 (x86_64-linux)"; not "Fetching gem metadata from ...".
      GEM_LINE = /\A(?<verb>Fetching|Installing|Using) (?<name>[^\s(]+) \(?(?<version>\d[^\s)]*)\)?(?<rest>.*)\z/.freeze
      INTERVAL_S = 5.0
      # How often #follow reads the log Bundler writes.
      FOLLOW_INTERVAL_S = 0.25

      attr_reader :installed

      # :out :: where the lines go (an IO)
      # :label :: what is being installed, e.g. "rails-posts + puma on ruby"
      # :tty :: redraw one line in place (default: false: one line per update)
      # :interval_s :: the least time between two updates (default: 5)
      # :clock :: returns monotonic seconds (default: Process::CLOCK_MONOTONIC)
      def initialize(out:, label:, tty: false, interval_s: INTERVAL_S,
                     clock: -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) })
        @out = out
        @label = label
        @tty = tty
        @interval_s = interval_s
        @clock = clock
        @total = nil
        @seen = {}
        @installed = 0
        @current = nil
      end

      # Starts the clock; total is the number of gems when known up front
      # (the lockfile the install starts from), else nil.
      def start(total: nil)
        @total = total
        @started = @clock.call
        @last_shown = @started
      end

      # The number of gems done or under way ("Using" or "Installing").
      def done
        @seen.size
      end

      # Runs the block (which runs Bundler, its output appended to log)
      # while a thread feeds the lines appended to log to #line every
      # FOLLOW_INTERVAL_S; the rest once the block is done. Returns the
      # block's value.
      def follow(log)
        offset = File.exist?(log) ? File.size(log) : 0
        pending = +""
        feed = lambda do
          chunk = File.exist?(log) ? File.open(log, "rb") { |file| file.seek(offset) && file.read } : ""
          offset += chunk.bytesize
          lines = (pending + chunk.dup.force_encoding(Encoding::UTF_8).scrub).split("\n", -1)
          pending = lines.pop || +""
          lines.each { |text| line(text) }
        end
        done = false
        follower = Thread.new do
          until done
            feed.call
            sleep FOLLOW_INTERVAL_S
          end
        end
        begin
          yield
        ensure
          done = true
          follower.join
          feed.call
          line(pending) unless pending.empty?
        end
      end

      # Takes one line of Bundler's output; prints an update when one is due.
      def line(text)
        match = GEM_LINE.match(text.to_s.strip)
        return unless match

        name = match[:name]
        case match[:verb]
        when "Installing"
          @installed += 1 unless @seen.key?(name)
          @seen[name] = true
          native = match[:rest].include?("native extensions") ? ", native extensions" : ""
          @current = "installing #{name} #{match[:version]}#{native}"
        when "Fetching"
          @current = "fetching #{name} #{match[:version]}"
        else
          @seen[name] = true
        end
        show if @clock.call - @last_shown >= @interval_s
      end

      # The final line: how many gems, how many really installed, and how
      # long it took; or how far it got when it failed.
      def finish(ok:)
        elapsed = duration(@clock.call - @started)
        text = if ok
                 "#{@label}: #{gems(done)} ready in #{elapsed} (#{@installed} installed, " \
                   "#{done - @installed} already there)"
               else
                 "#{@label}: install failed after #{elapsed}, at gem #{position}"
               end
        emit(text, final: true)
      end

      private

      def show
        @last_shown = @clock.call
        at = @current ? " (#{@current})" : ""
        emit("#{@label}: gem #{position}#{at}, #{duration(@last_shown - @started)}", final: false)
      end

      def position
        @total ? "#{done} of about #{[@total, done].max}" : done.to_s
      end

      def gems(count)
        count == 1 ? "1 gem" : "#{count} gems"
      end

      def emit(text, final:)
        if @tty
          @out.print("\r#{text}\e[K#{"\n" if final}")
        else
          @out.puts(text)
        end
        @out.flush if @out.respond_to?(:flush)
      end

      def duration(seconds)
        Progress.duration(seconds)
      end
    end
  end
end
