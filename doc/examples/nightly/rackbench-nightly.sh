#!/usr/bin/env bash
# rackbench's nightly run of Ruby's master (doc/publish.md, "Nightly"):
#
#   1. update a git mirror of Ruby (or of your app) from upstream;
#   2. build master (`rackbench rubies build`); a build that fails is
#      recorded as a failed run (`rackbench record-failure`), published, and
#      the night ends there;
#   3. run the experiment, labelled branch=REF night=DATE (the commit is the
#      ruby's revision label, taken from the build); on a fleet when
#      RACKBENCH_FLEET is set;
#   4. publish the site; a regression found tonight is checked by running
#      the same commit again (labelled rerun=1) and publishing again;
#   5. each confirmed regression whose range holds more than one commit is
#      bisected (`rackbench bisect`) once, and its result kept with it.
#
# Everything it does is an ordinary rackbench command: no daemon. Run it
# from the systemd timer beside it, or cron. Settings (environment, e.g.
# from /etc/rackbench/nightly.env):
#
#   RACKBENCH_NIGHTLY_DIR  state: logs, bisect results, the lock (default /var/lib/rackbench)
#   NIGHTLY_EXPERIMENT     the experiment file; its ruby's build: names the mirror
#                          (default: experiment.yml beside this script)
#   NIGHTLY_UPSTREAM       where to fetch from (default https://github.com/ruby/ruby.git)
#   NIGHTLY_MIRROR         the mirror, a bare repository (default $RACKBENCH_NIGHTLY_DIR/ruby.git)
#   NIGHTLY_REF            the branch (default master)
#   NIGHTLY_OVER           what the mirror is: ruby or app (default ruby), for bisect --over
#   NIGHTLY_SITE           where to publish (default $RACKBENCH_NIGHTLY_DIR/site)
#   NIGHTLY_URL            the site's address, for the feed (default: none)
#   NIGHTLY_ON_REGRESSION  a command run once per new regression (announce-regression.sh)
#   NIGHTLY_DATE           the night's label (default: today, UTC)
#   NIGHTLY_BISECT_OPTIONS further options of `rackbench bisect` (e.g. --min-batches 3; default: none)
#   RACKBENCH_STORE        a results store URL (postgres://...; default: the results directory
#                          $RACKBENCH_NIGHTLY_DIR/results, which keeps the runs' logs either way)
#   RACKBENCH_FLEET        a fleet's PostgreSQL URL: the run goes to its queue
#   RACKBENCH_TESTBED      the fleet's testbed (default: nightly)
#   RACKBENCH              the rackbench command (default: rackbench)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
state="${RACKBENCH_NIGHTLY_DIR:-/var/lib/rackbench}"
experiment="${NIGHTLY_EXPERIMENT:-$here/experiment.yml}"
upstream="${NIGHTLY_UPSTREAM:-https://github.com/ruby/ruby.git}"
mirror="${NIGHTLY_MIRROR:-$state/ruby.git}"
ref="${NIGHTLY_REF:-master}"
over="${NIGHTLY_OVER:-ruby}"
site="${NIGHTLY_SITE:-$state/site}"
night="${NIGHTLY_DATE:-$(date -u +%Y-%m-%d)}"
rackbench="${RACKBENCH:-rackbench}"
# Every command reads and writes the results directory, or RACKBENCH_STORE
# (a URL) when it is set: then the directory keeps only the runs' logs.
results=(--results "$state/results")

mkdir -p "$state/logs" "$state/bisect"
log="$state/logs/$night.log"
exec > >(tee -a "$log") 2>&1
# One night at a time: a night still running when the next starts is left to finish.
exec 9>"$state/nightly.lock"
flock -n 9 || { echo "rackbench-nightly: another night is still running (lock $state/nightly.lock)"; exit 0; }

say() { echo "rackbench-nightly $(date -u +%H:%M:%S): $*"; }

labels=(--label "branch=$ref" --label "night=$night")
publish_args=("${results[@]}" --out "$site" --where "branch=$ref")
[ -n "${NIGHTLY_URL:-}" ] && publish_args+=(--url "$NIGHTLY_URL")
[ -n "${NIGHTLY_ON_REGRESSION:-}" ] && publish_args+=(--on-regression "$NIGHTLY_ON_REGRESSION")

publish() {
  # A command that failed to announce is tried again next time: not fatal.
  "$rackbench" publish "${publish_args[@]}" || say "publish: an announcement failed (tried again next time)"
}

run_experiment() {
  if [ -n "${RACKBENCH_FLEET:-}" ]; then
    "$rackbench" run "$experiment" "${results[@]}" "$@" --fleet "$RACKBENCH_FLEET" --testbed "${RACKBENCH_TESTBED:-nightly}"
  else
    "$rackbench" run "$experiment" "${results[@]}" "$@"
  fi
}

# 1. The mirror.
if [ -d "$mirror" ]; then
  say "fetching $upstream into $mirror"
  git -C "$mirror" fetch --quiet --prune "$upstream" "+refs/heads/*:refs/heads/*"
else
  say "cloning $upstream into $mirror"
  git clone --quiet --mirror "$upstream" "$mirror"
fi
commit="$(git -C "$mirror" rev-parse --verify "$ref^{commit}")"
say "night $night: $ref is at $commit"

# 2. The build (an experiment of your app on installed rubies has none);
#    a failure is recorded, not hidden.
build_log="$state/logs/$night-build.log"
if ! "$rackbench" rubies build "$experiment" >"$build_log" 2>&1 &&
   ! grep -q "builds no ruby from source" "$build_log"; then
  reason="$(grep -m1 -E 'build|failed|error' "$build_log" | tail -c 300 || true)"
  say "the build failed: ${reason:-see $build_log}"
  "$rackbench" record-failure "$experiment" "${results[@]}" "${labels[@]}" --reason "${reason:-the build failed}" --log "$build_log"
  publish
  exit 1
fi

# 3. The run (a night run twice resumes: the same labels are the same experiment).
say "running $experiment"
run_experiment "${labels[@]}" || run_experiment "${labels[@]}" --resume

# 4. Publish; a regression found tonight is checked by a second run of the commit.
publish
found_tonight="$("$rackbench" regressions "${results[@]}" --state detected --json | ruby -rjson -e '
  night = ARGV[0]
  puts JSON.parse($stdin.read).count { |r| r.dig("range", "bad", "labels_text").to_s.include?("night=#{night}") }' "$night")"
if [ "$found_tonight" -gt 0 ]; then
  say "$found_tonight regression(s) found tonight: running $commit again to confirm or refute them"
  run_experiment "${labels[@]}" --label rerun=1 || run_experiment "${labels[@]}" --label rerun=1 --resume
  publish
fi

# 5. Bisect each confirmed regression whose range holds more than one commit, once.
"$rackbench" regressions "${results[@]}" --state confirmed --json | ruby -rjson -e '
  over = ARGV[0]
  JSON.parse($stdin.read).each do |r|
    next if r["bisect"]
    rev = Array(r.dig("range", "revisions")).find { |v| v["of"] == over && v["good"] && v["bad"] }
    next unless rev
    # The figure that moved, as publish and bisect both name it; half its change as the threshold.
    threshold = format("%.2f%%", [r["change"].abs * 50, 0.1].max)
    puts [r["id"], rev["good"], rev["bad"], r["figure"], threshold].join(" ")
  end' "$over" |
while read -r id good bad measure threshold; do
  commits="$(git -C "$mirror" rev-list --count "$good..$bad")"
  if [ "$commits" -le 1 ]; then
    say "regression #$id is one commit ($bad): nothing to bisect"
    continue
  fi
  result="$state/bisect/$id.json"
  resume=()
  [ -d "$state/bisect/$id" ] && resume=(--resume)
  say "bisecting regression #$id over $commits commits ($good..$bad, $measure beyond $threshold)"
  # Exit 0: it concluded; 4: it ended without naming a commit (the JSON
  # says why): either is the result, kept. Anything else (a build that
  # failed for good or bad, an interruption) is tried again, resumed, the
  # next night.
  code=0
  # shellcheck disable=SC2086 # NIGHTLY_BISECT_OPTIONS is a list of options
  # (stdin is the list being read: no command of the loop may take it)
  "$rackbench" bisect "$experiment" --over "$over" --good "$good" --bad "$bad" --measure "$measure" \
    --threshold "$threshold" --results "$state/bisect/$id" "${resume[@]}" ${NIGHTLY_BISECT_OPTIONS:-} \
    --json </dev/null >"$result.tmp" || code=$?
  if [ "$code" -eq 0 ] || [ "$code" -eq 4 ]; then
    mv "$result.tmp" "$result"
    "$rackbench" regressions bisected "$id" "${results[@]}" --result "$result" --by rackbench-nightly </dev/null >/dev/null
    say "regression #$id bisected: $(ruby -rjson -e 'puts JSON.parse(File.read(ARGV[0]))["summary"]' "$result")"
  else
    say "bisect of regression #$id failed (exit $code; its steps are kept in $state/bisect/$id; the next night resumes it)"
  fi
done
publish
say "done"
