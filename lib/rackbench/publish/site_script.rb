# frozen_string_literal: true

module Rackbench
  module Publish
    # assets/site.js, last on every page: draws the page's charts as the
    # report's render script does (vega-embed, ast: true so that no
    # expression is compiled with Function(), no action menu linking to
    # the online editor), runs the comparison page (ComparePage), then
    # writes the outcome into <body data-render-status> for the browser
    # test: {"charts", "rendered", "comparisons" (rows of the comparison
    # table), "compared" (the two runs' ids), "errors", "warnings"}.
    #
    # The comparison is `compare`'s, in the browser: per configuration and
    # figure, B's median over A's, with the percentile interval of that
    # ratio over 2,000 bootstrap resamples of each run's batches, drawn
    # from a seeded generator (xorshift32), so the page shows the same
    # interval every time it is opened.
    SITE_SCRIPT = <<~JS
      (function () {
        "use strict";
        var problems = window.rackbenchProblems || { errors: [], warnings: [] };
        var status = { charts: 0, rendered: [], comparisons: null };
        var pending = [];
        var nodes = Array.prototype.slice.call(document.querySelectorAll("[data-chart]"));
        status.charts = nodes.length;
        if (nodes.length) {
          if (typeof vegaEmbed !== "function") {
            problems.errors.push("vega-embed did not load");
          } else {
            var options = { mode: "vega-lite", renderer: "svg", actions: false, ast: true };
            nodes.forEach(function (node) {
              try {
                var spec = JSON.parse(document.getElementById(node.getAttribute("data-spec")).textContent);
                pending.push(vegaEmbed(node, spec, options).catch(function (error) {
                  problems.errors.push(node.id + ": " + error);
                }));
              } catch (error) {
                problems.errors.push(node.id + ": " + error);
              }
            });
          }
        }
        var compare = document.getElementById("compare");
        if (compare) pending.push(startCompare());
        Promise.all(pending).then(finish, function (error) { problems.errors.push(String(error)); finish(); });

        function finish() {
          status.rendered = nodes.filter(function (node) { return node.querySelector("svg"); })
                                 .map(function (node) { return node.id; });
          status.errors = problems.errors;
          status.warnings = problems.warnings;
          document.body.setAttribute("data-render-status", JSON.stringify(status));
        }

        function startCompare() {
          var data = JSON.parse(document.getElementById("compare-data").textContent);
          var pickA = document.getElementById("compare-a"), pickB = document.getElementById("compare-b");
          var loaded = {};
          window.rackbenchRun = function (id, doc) { loaded[id] = doc; };
          data.runs.slice().reverse().forEach(function (run) {
            [pickA, pickB].forEach(function (pick) {
              var option = document.createElement("option");
              option.value = String(run.experiment_id);
              option.textContent = "run " + (run.run + 1) + " · " + run.created_at.replace("T", " ").replace("Z", "") +
                " · id " + run.experiment_id + (run.labels_text ? " · " + run.labels_text : "");
              pick.appendChild(option);
            });
          });
          var chosen = fromHash();
          var ids = data.runs.map(function (r) { return String(r.experiment_id); });
          if (ids.length === 0) { show("<p class=\\"empty\\">No run measured anything yet.</p>"); status.comparisons = 0; return null; }
          pickB.value = chosen.b && ids.indexOf(chosen.b) >= 0 ? chosen.b : ids[ids.length - 1];
          pickA.value = chosen.a && ids.indexOf(chosen.a) >= 0 ? chosen.a : ids[Math.max(ids.length - 2, 0)];
          [pickA, pickB].forEach(function (pick) { pick.addEventListener("change", run); });
          return run();

          function run() {
            var a = pickA.value, b = pickB.value;
            if (window.history && window.history.replaceState) window.history.replaceState(null, "", "#a=" + a + "&b=" + b);
            return Promise.all([load(a), load(b)]).then(function () {
              status.compared = [a, b];
              status.comparisons = render(loaded[a], loaded[b]);
            }, function (error) { problems.errors.push(String(error)); show("<p class=\\"failed\\">" + esc(String(error)) + "</p>"); });
          }

          function load(id) {
            if (loaded[id]) return Promise.resolve();
            return new Promise(function (resolve, reject) {
              var script = document.createElement("script");
              script.src = data.base + encodeURIComponent(id) + ".js";
              script.onload = function () { loaded[id] ? resolve() : reject("run " + id + ": its data file holds no run"); };
              script.onerror = function () { reject("run " + id + ": cannot load " + script.src); };
              document.body.appendChild(script);
            });
          }

          function render(docA, docB) {
            var byKey = {};
            docA.points.forEach(function (p) { byKey[p.config_id + "\\u0000" + p.figure] = p; });
            var rows = [];
            docB.points.forEach(function (pb) {
              var pa = byKey[pb.config_id + "\\u0000" + pb.figure];
              var figure = data.figures[pb.figure];
              if (!pa || !figure || pa.median === null || pb.median === null) return;
              var ratio = pb.median / pa.median;
              var ci = ratioInterval(pa.values, pb.values, data.confidence, data.resamples);
              rows.push("<tr><td>" + esc(pb.config_label || pb.config_id) + "</td><td>" + esc(figure.words) +
                "</td><td class=\\"num\\">" + num(pa.median) + "</td><td class=\\"num\\">" + num(pb.median) +
                "</td><td class=\\"num\\">" + change(ratio, figure) + "</td><td class=\\"num\\">" +
                (ci ? ratio.toFixed(4) + " (" + ci[0].toFixed(4) + "–" + ci[1].toFixed(4) + ")" : ratio.toFixed(4)) +
                "</td><td>" + verdict(ci, figure) + "</td></tr>");
            });
            if (rows.length === 0) {
              show("<p class=\\"empty\\">The two runs share no configuration and figure.</p>");
              return 0;
            }
            show("<div class=\\"scroll\\"><table><thead><tr><th>configuration</th><th>figure</th><th class=\\"num\\">A</th>" +
              "<th class=\\"num\\">B</th><th class=\\"num\\">change</th><th class=\\"num\\">B / A (interval)</th>" +
              "<th>verdict</th></tr></thead><tbody>" + rows.join("") + "</tbody></table></div>");
            return rows.length;
          }

          function verdict(ci, figure) {
            if (!ci) return "too few batches";
            var eq = figure.equivalence;
            var higher = ci[0] > 1 + eq, lower = ci[1] < 1 - eq;
            if (!higher && !lower) return "no difference detected";
            var better = (higher && figure.better === "higher") || (lower && figure.better === "lower");
            return better ? "<span class=\\"better\\">better</span>" : "<span class=\\"worse\\">worse</span>";
          }

          function change(ratio, figure) {
            var pct = (ratio - 1) * 100;
            var better = (pct > 0) === (figure.better === "higher");
            var text = (pct < 0 ? "\\u2212" : "+") + Math.abs(pct).toFixed(Math.abs(pct) < 1 ? 2 : 1) + "%";
            return pct === 0 ? text : "<span class=\\"" + (better ? "better" : "worse") + "\\">" + text + "</span>";
          }

          function show(html) { document.getElementById("comparison").innerHTML = html; }
        }

        function ratioInterval(a, b, confidence, resamples) {
          if (!a || !b || a.length < 2 || b.length < 2) return null;
          var next = xorshift(1), draws = [];
          for (var k = 0; k < resamples; k++) draws.push(median(resample(b, next)) / median(resample(a, next)));
          draws.sort(function (x, y) { return x - y; });
          var tail = (1 - confidence) / 2;
          return [quantile(draws, tail), quantile(draws, 1 - tail)];
        }

        function xorshift(seed) {
          var s = seed >>> 0 || 1;
          return function () { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296; };
        }

        function resample(values, next) {
          var out = new Array(values.length);
          for (var i = 0; i < values.length; i++) out[i] = values[Math.floor(next() * values.length)];
          return out;
        }

        function median(values) {
          var sorted = values.slice().sort(function (x, y) { return x - y; }), n = sorted.length;
          return n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }

        // Hyndman and Fan's type 7, as Stats.quantile.
        function quantile(sorted, q) {
          var h = (sorted.length - 1) * q, below = Math.floor(h);
          if (below + 1 >= sorted.length) return sorted[below];
          return sorted[below] + (h - below) * (sorted[below + 1] - sorted[below]);
        }

        function num(value) {
          return Math.abs(value) >= 100 ? Math.round(value).toLocaleString("en-US") : value.toPrecision(4);
        }

        function fromHash() {
          var found = {};
          window.location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
            var parts = pair.split("=");
            if (parts.length === 2) found[parts[0]] = decodeURIComponent(parts[1]);
          });
          return found;
        }

        function esc(text) {
          return String(text).replace(/[&<>"']/g, function (c) {
            return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\\"": "&quot;", "'": "&#39;" }[c];
          });
        }
      })();
    JS
  end
end
