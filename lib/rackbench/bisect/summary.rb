# frozen_string_literal: true

module Rackbench
  module Bisect
    # A bisect document (Result#to_h, as read back from JSON) in a few
    # lines, for where it is kept beside something else: a regression's
    # `show` and its published page. Its status, and each step's first bad
    # commit with the effect and the confirmation.
    module Summary
      FORMAT = "rackbench-bisect"

      module_function

      # The lines of +doc+, or nil when it is not a bisect document (a
      # result kept by hand may be anything).
      def lines(doc)
        return nil unless doc.is_a?(Hash) && doc["format"] == FORMAT

        steps = Array(doc["steps"]).map do |step|
          bad = step["first_bad"] || {}
          "first bad commit #{bad["commit"]} #{bad["subject"]}: #{step.dig("effect", "text")} than " \
            "#{step.dig("last_good", "short")}; #{Terminal.confirmation_text(step["confirmation"])}"
        end
        ["#{doc["status"]}: #{doc["summary"]}", *steps]
      end
    end
  end
end
