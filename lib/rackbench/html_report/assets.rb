# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # The JavaScript that draws the charts: Vega, Vega-Lite and vega-embed,
    # as shipped in the vega gem (ankane/vega). Read from the installed gem
    # at render time and inlined, so the report depends on no CDN and the
    # repository holds no copy of them.
    module Assets
      GEM_NAME = "vega"
      # Load order matters: Vega-Lite and vega-embed register on the
      # global `vega` object that vega.js defines.
      FILES = %w[vega.js vega-lite.js vega-embed.js].freeze
      DIRECTORY = File.join("vendor", "assets", "javascripts")

      module_function

      # [[file name, JavaScript source], ...] in load order. Raises Error
      # when the gem or one of its files is missing.
      def scripts
        dir = directory
        FILES.map do |name|
          path = File.join(dir, name)
          next [name, File.read(path, encoding: "UTF-8")] if File.file?(path)

          raise Error, "the #{GEM_NAME} gem has no #{DIRECTORY}/#{name} (gem at #{spec.gem_dir})"
        end
      end

      # Where the gem keeps its JavaScript.
      def directory
        File.join(spec.gem_dir, DIRECTORY)
      end

      # The vega gem's version, shown in the page footer.
      def version
        spec.version.to_s
      end

      def spec
        Gem::Specification.find_by_name(GEM_NAME)
      rescue Gem::MissingSpecError
        raise Error, "the #{GEM_NAME} gem is not installed (the HTML report inlines its JavaScript): run bundle install"
      end
    end
  end
end
