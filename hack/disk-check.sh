#!/usr/bin/env bash
# disk-check.sh: say, before `make test` starts, how much disk it has.
#
# Why: a cold `make test` writes tens of gigabytes (the Go build and module
# caches, the patched and pristine trees, the tool builds, the node's
# images; docs/testing.md, "Disk"). When the disk fills part-way the
# failure shows far from its cause: etcd panics at start-up, an image
# layer's write fails, a suite reports a component that would not start.
# This prints the free space of each filesystem those land on and warns,
# naming the figure, when one has less than a cold run writes to it. It
# does not fail: a warm cache needs far less, and only the run can tell.
#
# Usage: hack/disk-check.sh        (no arguments; COLD_GB overrides the figure)
set -euo pipefail

# What a cold clean-clone `make test` wrote, measured (docs/testing.md).
cold_gb=${COLD_GB:-30}

root=$(cd "$(dirname "$0")/.." && pwd)
gocache=$(go env GOCACHE)
gomodcache=$(go env GOMODCACHE)
tmp=${TMPDIR:-/tmp}

declare -A names=() free=()
order=()
for what in "build cache:$gocache" "module cache:$gomodcache" "checkout:$root" "temporary files:$tmp"; do
  name=${what%%:*} dir=${what#*:}
  # The folder may not exist yet on a fresh machine: ask about its parent.
  probe=$dir
  while [ ! -e "$probe" ]; do probe=$(dirname "$probe"); done
  read -r fs free_kb < <(df -P -k "$probe" | awk 'NR==2 {print $6, $4}')
  if [ -z "${names[$fs]:-}" ]; then
    order+=("$fs")
    names[$fs]="$name $dir"
    free[$fs]=$((free_kb / 1024 / 1024))
  else
    names[$fs]="${names[$fs]}, $name $dir"
  fi
done
warn=0
for fs in "${order[@]}"; do
  echo "disk: ${free[$fs]} GB free on $fs (${names[$fs]})"
  [ "${free[$fs]}" -lt "$cold_gb" ] && warn=1
done
if [ "$warn" -eq 1 ]; then
  echo "disk: WARNING: a cold make test writes about $cold_gb GB; warm caches need less, but if a suite fails with 'no space left on device' or a component exits at start-up, free space first (go clean -cache; rm -rf _output .cache)" >&2
fi
