# frozen_string_literal: true

require "json"
require "open3"

module Rackbench
  module Proxy
    # A proxy cache's hits and misses over the measured window, from the
    # proxy's own records: #mark at the window's start, #since(mark) at
    # its end gives { "hits", "misses", "uncached", "statuses" }
    # ("uncached": requests the cache never looked up, such as POSTs).
    module CacheCounts
      # The hit ratio of counts (hits / (hits + misses)), or nil when the
      # cache was never looked up.
      def self.hit_ratio(counts)
        return nil unless counts.is_a?(Hash)

        looked_up = counts["hits"].to_i + counts["misses"].to_i
        looked_up.zero? ? nil : counts["hits"].to_i.fdiv(looked_up)
      end

      # nginx-cache: one access-log line per request, "$upstream_cache_status
      # $status" (NginxConfig::LOG_FORMAT). The window is a byte range of the
      # log: nginx writes each line when its request ends (unbuffered), so
      # the lines between the two marks are the requests that ended in the
      # window, as the engine counts them.
      class AccessLog
        # $upstream_cache_status values (nginx docs): served from the cache,
        # fetched from the app, and "-" for a request the cache never saw.
        HITS = %w[HIT STALE UPDATING REVALIDATED].freeze
        MISSES = %w[MISS EXPIRED BYPASS].freeze

        def initialize(path)
          @path = path
        end

        # The log's size now.
        def mark
          File.size?(@path).to_i
        end

        # Counts of the lines written since mark.
        def since(mark)
          text = File.open(@path, "rb") do |file|
            file.seek(mark)
            file.read
          end
          count(text.lines.select { |line| line.end_with?("\n") })
        rescue Errno::ENOENT
          count([])
        end

        private

        def count(lines)
          statuses = Hash.new(0)
          lines.each { |line| statuses[line.split.first.to_s] += 1 }
          { "hits" => HITS.sum { |s| statuses[s] }, "misses" => MISSES.sum { |s| statuses[s] },
            "uncached" => statuses.sum { |s, n| HITS.include?(s) || MISSES.include?(s) ? 0 : n },
            "statuses" => statuses.sort.to_h }
        end
      end

      # varnish: its own counters (varnishstat -j), read at both marks.
      # MAIN.cache_hit, cache_miss; MAIN.s_pass counts requests passed to the
      # app without a lookup (POSTs).
      class Varnishstat
        FIELDS = { "MAIN.cache_hit" => "hits", "MAIN.cache_miss" => "misses", "MAIN.s_pass" => "uncached" }.freeze

        # stat_binary :: varnishstat; work_dir :: varnishd's -n directory
        def initialize(stat_binary, work_dir)
          @stat_binary = stat_binary
          @work_dir = work_dir
        end

        # The counters now ({ "hits" => n, ... }).
        def mark
          out, err, status = Open3.capture3(@stat_binary, "-n", @work_dir, "-j",
                                            *FIELDS.keys.flat_map { |field| ["-f", field] })
          raise Error, "varnishstat failed: #{err.strip}" unless status.success?

          self.class.parse(out)
        rescue SystemCallError => e
          raise Error, "cannot run varnishstat: #{e.message}"
        end

        # The differences since mark, statuses being the raw counters'.
        def since(mark)
          now = self.mark
          counts = FIELDS.values.to_h { |name| [name, now.fetch(name, 0) - mark.fetch(name, 0)] }
          counts.merge("statuses" => FIELDS.to_h { |field, name| [field, counts[name]] })
        end

        # The counters of varnishstat -j output: Varnish 6.5+ nests them
        # under "counters", older versions do not.
        def self.parse(json)
          document = JSON.parse(json)
          counters = document["counters"] || document
          FIELDS.to_h { |field, name| [name, counters.dig(field, "value").to_i] }
        end
      end
    end
  end
end
