# frozen_string_literal: true

require "cgi"
require "json"

module Rackbench
  class HtmlReport
    # Escaping for the three contexts a string can land in on the page.
    # Every string of the report document may come from a user (dims,
    # experiment file) or from a server (failure reasons), so nothing is
    # written into the page without going through one of these.
    module Escape
      # Characters that must not appear raw in JSON inside a <script>
      # element: "<" could start "</script>" or "<!--" (which changes how
      # the HTML parser reads the rest of the script), ">" and "&" are
      # escaped for symmetry with HTML, and U+2028/2029 are line
      # terminators in older JavaScript parsers.
      SCRIPT_JSON_UNSAFE = /[<>&\u2028\u2029]/.freeze

      module_function

      # +value+ (any object, nil gives "") as HTML text or attribute value.
      def html(value)
        CGI.escapeHTML(value.to_s)
      end

      # +object+ as JSON that is safe inside <script type="application/json">:
      # the unsafe characters become \uXXXX escapes, which JSON.parse turns
      # back into the same characters.
      def script_json(object)
        JSON.generate(object).gsub(SCRIPT_JSON_UNSAFE) { |char| format("\\u%04x", char.ord) }
      end

      # JavaScript source made safe to inline in a <script> element: every
      # "</script" (any case) becomes "<\/script", which means the same
      # inside the string literals, regular expressions and comments where
      # it can appear in a library, but no longer ends the element. "<!--"
      # becomes "<\!--" for the same reason: it would switch the HTML
      # parser into its "escaped script" state.
      def script_source(source)
        source.gsub(%r{</(script)}i) { "<\\/#{Regexp.last_match(1)}" }.gsub("<!--", "<\\!--")
      end
    end
  end
end
