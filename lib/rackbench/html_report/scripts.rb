# frozen_string_literal: true

module Rackbench
  class HtmlReport
    # The page's own JavaScript (besides the inlined Vega libraries).
    module Scripts
      # First in <head>: collects every error (uncaught exceptions, rejected
      # promises, console.error, console.warn and Content-Security-Policy
      # violations) so the page can report them with its render status.
      ERROR_COLLECTOR = <<~JS
        (function () {
          var problems = window.rackbenchProblems = { errors: [], warnings: [] };
          function text(args) { return Array.prototype.map.call(args, String).join(" "); }
          window.addEventListener("error", function (event) { problems.errors.push("uncaught: " + event.message); });
          window.addEventListener("unhandledrejection", function (event) {
            problems.errors.push("unhandled rejection: " + event.reason);
          });
          document.addEventListener("securitypolicyviolation", function (event) {
            problems.errors.push("CSP blocked " + event.violatedDirective + ": " + event.blockedURI);
          });
          var error = console.error, warn = console.warn;
          console.error = function () { problems.errors.push(text(arguments)); return error.apply(console, arguments); };
          console.warn = function () { problems.warnings.push(text(arguments)); return warn.apply(console, arguments); };
        })();
      JS

      # Last in <body>: draws every chart container ([data-chart], whose
      # spec is the JSON script named by data-spec) with vega-embed, then
      # writes the outcome as JSON into <body data-render-status>, for
      # people debugging a page and for the headless browser test:
      # {"charts": N, "rendered": [ids with an SVG], "errors": [...], "warnings": [...]}.
      #
      # ast: true makes Vega interpret its expressions instead of compiling
      # them with Function(), so the page works under a Content-Security-
      # Policy without 'unsafe-eval'. actions: false drops vega-embed's menu,
      # whose links lead to the online Vega editor.
      RENDER = <<~JS
        (function () {
          var problems = window.rackbenchProblems;
          var nodes = Array.prototype.slice.call(document.querySelectorAll("[data-chart]"));
          function finish() {
            var rendered = nodes.filter(function (node) { return node.querySelector("svg"); })
                                .map(function (node) { return node.id; });
            document.body.setAttribute("data-render-status", JSON.stringify({
              charts: nodes.length, rendered: rendered, errors: problems.errors, warnings: problems.warnings
            }));
          }
          if (typeof vegaEmbed !== "function") {
            problems.errors.push("vega-embed did not load");
            finish();
            return;
          }
          var options = { mode: "vega-lite", renderer: "svg", actions: false, ast: true };
          Promise.all(nodes.map(function (node) {
            try {
              var spec = JSON.parse(document.getElementById(node.getAttribute("data-spec")).textContent);
              return vegaEmbed(node, spec, options).catch(function (error) {
                problems.errors.push(node.id + ": " + error);
              });
            } catch (error) {
              problems.errors.push(node.id + ": " + error);
              return null;
            }
          })).then(finish);
        })();
      JS
    end
  end
end
