# frozen_string_literal: true

module Rackbench
  class ServerProcess
    # Judges the one answer the runner asks for before measuring
    # (TechEmpower style): status, Content-Type and body, with a message
    # naming every mismatch and a snippet of what came back.
    module AppCheck
      BODY_SNIPPET_CHARS = 120

      module_function

      # Raises SetupError unless the answer to GET +path+ (+status+,
      # +content_type+, +body+) is what the app promised.
      #
      # :expect_status :: the status it must have
      # :expect_content_type :: a case-insensitive prefix of the Content-Type, or nil
      # :expect_body :: a String the body must contain, a Regexp it must match, or nil
      def verify!(path, status, content_type, body, expect_status:, expect_content_type:, expect_body:)
        problems = []
        problems << "status #{status}, expected #{expect_status}" if status != expect_status
        if expect_content_type && !content_type_matches?(content_type, expect_content_type)
          problems << "content type #{content_type.inspect}, expected #{expect_content_type.inspect}"
        end
        problems << "body lacks #{expect_body.inspect}" if expect_body && !body_matches?(body, expect_body)
        return if problems.empty?

        raise SetupError, "app check failed: GET #{path} returned #{problems.join(" and ")}; body: #{snippet(body)}"
      end

      # A missing header never matches; parameters after the media type
      # (charset) are allowed because only a prefix is compared.
      def content_type_matches?(actual, expected)
        !actual.nil? && actual.strip.downcase.start_with?(expected.to_s.strip.downcase)
      end

      def body_matches?(body, expected)
        expected.is_a?(Regexp) ? expected.match?(body) : body.include?(expected.to_s)
      end

      def snippet(body)
        text = body.to_s.dup.force_encoding(Encoding::UTF_8).scrub
        text.length > BODY_SNIPPET_CHARS ? "#{text[0, BODY_SNIPPET_CHARS].inspect}..." : text.inspect
      end
    end
  end
end
