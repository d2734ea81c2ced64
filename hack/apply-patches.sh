#!/usr/bin/env bash
# apply-patches.sh: pristine upstream -> verified -> carried libraries, overlay
# and patch series -> patched tree (and its pristine twin) under
# _output/trees/. A thin wrapper: the work is done by `holdfast apply`
# (cmd/holdfast, internal/pipeline); see docs/pipeline.md.
#
# Usage: hack/apply-patches.sh --upstream NAME [--version V | --all] [--out DIR] [--patched-only]
#   (it runs from the repository root: a relative --out is relative to it)
#   e.g. hack/apply-patches.sh --upstream karmada            (the default pin, v1.18.2)
#        hack/apply-patches.sh --upstream karmada --all      (every pinned version)
set -euo pipefail

cd "$(dirname "$0")/.."
exec go run ./cmd/holdfast apply "$@"
