# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # What every page rackbench writes shares (report.html, capacity.html,
    # tune.html): the head (the Content-Security-Policy that forbids every
    # network request, the stylesheet, the error collector the browser test
    # reads), the inlined chart libraries and the render script after the
    # body; and the atomic write, so that a reader never sees half a page.
    module Frame
      module_function

      # The whole document around +body+ (HTML), titled +title+ (text),
      # +footer+ (HTML) last, then the +scripts+ ([[name, JavaScript
      # source], ...], Assets.scripts) inlined and the render script.
      def html(title:, body:, footer:, scripts:)
        <<~HTML
          <!DOCTYPE html>
          <html lang="en">
          <head>
          <meta charset="utf-8">
          <meta http-equiv="Content-Security-Policy" content="#{Page::CONTENT_SECURITY_POLICY}">
          <meta name="viewport" content="width=device-width, initial-scale=1">
          <meta name="referrer" content="no-referrer">
          <title>#{Escape.html(title)}</title>
          <style>
          #{STYLE}</style>
          <script>
          #{Escape.script_source(Scripts::ERROR_COLLECTOR)}</script>
          </head>
          <body>
          #{body}
          <footer>#{footer}</footer>
          #{library_scripts(scripts)}
          <script>
          #{Escape.script_source(Scripts::RENDER)}</script>
          </body>
          </html>
        HTML
      end

      # Writes +html+ to +path+ through a temporary file in the same
      # directory and a rename; returns +path+. Error names +what+.
      def write(path, html, what:)
        tmp = "#{path}.tmp-#{Process.pid}"
        File.write(tmp, html)
        File.rename(tmp, path)
        path
      rescue SystemCallError => e
        File.unlink(tmp) if tmp && File.exist?(tmp)
        raise Error, "cannot write #{what} to #{path}: #{e.message}"
      end

      def library_scripts(scripts)
        scripts.map do |name, source|
          %(<script data-library="#{Escape.html(name)}">\n#{Escape.script_source(source)}\n</script>)
        end.join("\n")
      end
    end
  end
end
