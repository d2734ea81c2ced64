#!/usr/bin/env bash
# mutate.sh: mutation testing of the given package folders with
# go-gremlins/gremlins (pinned in internal/toolcache, built once into
# .cache/tools by `holdfast tools path gremlins`). Each folder is one
# gremlins run over it and its subfolders: results in
# $OUTPUT_DIR/reports/mutate/<folder>.json, the run's log beside it, and its
# LIVED (surviving) mutants in <folder>.lived. docs/testing.md records the
# efficacy per package and judges every survivor.
#
# Usage: hack/mutate.sh FOLDER...   (e.g. ./pkg/hubfollow/ ./internal/pipeline/patchset/)
# Environment:
#   GREMLINS             the gremlins binary (default: holdfast tools path gremlins)
#   WORKERS              mutants tested at once (default 1: each is a go build
#                        plus its package's tests)
#   TIMEOUT_COEFFICIENT  a mutant's tests may take this many times as long as
#                        the coverage run before it counts as TIMED OUT (default 10)
#   OUTPUT_DIR           default _output
#   GREMLINS_FLAGS       more flags for `gremlins unleash` (e.g. --dry-run)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ $# -gt 0 ] || { echo "usage: hack/mutate.sh FOLDER..." >&2; exit 2; }

workers=${WORKERS:-1}
coefficient=${TIMEOUT_COEFFICIENT:-10}
output=${OUTPUT_DIR:-_output}
out=$output/reports/mutate
gremlins=${GREMLINS:-$(go run ./cmd/holdfast tools path gremlins)}
"$gremlins" --version

# gremlins copies the whole module root into a temporary folder per worker,
# and this checkout's root holds _output/ (patched trees and binaries,
# gigabytes). So it runs on a stage holding the files git would see
# (tracked and untracked, not ignored): uncommitted work is tested too. One
# stage per invocation, so two runs do not share one.
mkdir -p "$output/mutate" "$out"
stage=$(mktemp -d "$output/mutate/src.XXXXXX")
trap 'rm -rf "$stage"' EXIT
# A file deleted but still in the index is listed by --cached; skip it.
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf - | tar -xf - -C "$stage"
stage=$(cd "$stage" && pwd)

# The mutators: gremlins' defaults (arithmetic, boundaries, negated
# conditions, ++/--, negated numbers) plus && <-> || and break <-> continue,
# the kinds of slip the issue-28 audit found surviving in the gates.
mutators=(--invert-logical --invert-loopctrl)

rc=0
for p in "$@"; do
  rel=${p#./}
  rel=${rel%/...}
  rel=${rel%/}
  [ -d "$stage/$rel" ] || { echo "mutate: no folder $rel in the repository" >&2; rc=2; continue; }
  name=${rel//\//_}
  echo "== mutate: $rel (workers $workers, timeout coefficient $coefficient)"
  # -count=1: gremlins times the coverage run and scales each mutant's
  # timeout from it; a cached test result would make that a few
  # milliseconds. Each mutant runs its own package's tests, without -race:
  # the race detector's cost on every mutant buys nothing a killed/lived
  # verdict needs.
  if ! (cd "$stage" && GOFLAGS="-count=1 ${GOFLAGS:-}" "$gremlins" unleash "${mutators[@]}" \
      --workers "$workers" --timeout-coefficient "$coefficient" \
      --output "$root/$out/$name.json" ${GREMLINS_FLAGS:-} "$stage/$rel") >"$out/$name.log" 2>&1; then
    echo "mutate: gremlins failed on $rel; see $out/$name.log" >&2
    tail -20 "$out/$name.log" >&2
    rc=1
    continue
  fi
  grep -E '^ +LIVED ' "$out/$name.log" | sed 's/^ *//' >"$out/$name.lived" || true
  # The summary gremlins prints last: killed, lived, not covered, timed
  # out, not viable, efficacy and mutator coverage.
  sed -n '/ completed in /,$p' "$out/$name.log"
  echo "surviving mutants: $out/$name.lived ($(wc -l <"$out/$name.lived"))"
done
exit $rc
