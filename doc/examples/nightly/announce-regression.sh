#!/usr/bin/env bash
# Opens a GitHub issue for a new regression: rackbench publish
# --on-regression runs it once per regression, its document (doc/output.md,
# "The regression document") on standard input. Needs gh, GH_TOKEN and
# GH_REPO (owner/name). Exit 0 marks the regression announced; anything
# else and the next publish tries again.
set -euo pipefail
doc="$(cat)"
field() { printf '%s' "$doc" | ruby -rjson -e 'd = JSON.parse($stdin.read); puts ARGV.reduce(d) { |v, k| v.is_a?(Array) ? v[k.to_i] : v&.[](k) }' "$@"; }

title="$(printf '%s' "$doc" | ruby -rjson -e '
  d = JSON.parse($stdin.read)
  change = format("%+.1f%%", d["change"] * 100)
  puts "Regression ##{d["id"]}: #{d["figure_words"]} #{change} in #{d["config_label"]} (#{d["experiment"]})"')"
body="$(printf '%s' "$doc" | ruby -rjson -e '
  d = JSON.parse($stdin.read)
  range = Array(d.dig("range", "revisions")).map { |r| "- #{r["of"]} #{r["name"]}: `#{r["good"]}..#{r["bad"]}`" }
  puts <<~MD
    rackbench found a regression (#{d["state"]}): **#{d["figure_words"]} #{format("%+.2f%%", d["change"] * 100)}** in `#{d["config_id"]}`, experiment #{d["experiment"]}.

    Commit range:
    #{range.join("\n")}

    Details: #{d["url"]}
  MD
')"
gh issue create --repo "$GH_REPO" --title "$title" --label performance --body "$body" >/dev/null
echo "opened an issue for regression #$(field id)"
