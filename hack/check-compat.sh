#!/usr/bin/env bash
# check-compat.sh: prove that the library in pkg/ builds, vets and passes its
# tests against the dependency versions of every pinned upstream it is carried
# into.
#
# Why: pkg/ is copied into each upstream tree (import paths rewritten), where
# the upstream go.mod decides the versions of client-go, prometheus and the
# rest. Our own go.mod follows the newest upstream (Karmada v1.18.2); this
# script catches an API used here that an older upstream's versions lack
# (worker-operator v1.6.4 is on client-go v0.32, go 1.24).
#
# Usage: hack/check-compat.sh [MODULE@VERSION ...]
#   default: the oldest dependency set of each upstream family we patch.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
self=$(cd "$root" && go list -m)
upstreams=("$@")
if [ ${#upstreams[@]} -eq 0 ]; then
  upstreams=(github.com/kubeslice/worker-operator@v1.6.4 github.com/karmada-io/karmada@v1.16.0)
fi

toolchain=$(sed -n 's/^const Toolchain = "\(go[0-9.]*\)"$/\1/p' "$root/internal/pipeline/build/toolchain.go")
if [ -z "$toolchain" ]; then
  echo "compat: no const Toolchain in internal/pipeline/build/toolchain.go" >&2
  exit 1
fi

# modreqs is built once: `go run` of a path outside the temporary module
# below is refused.
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
(cd "$root" && go build -o "$tools/modreqs" ./hack/tools/modreqs)
modreqs() { "$tools/modreqs" "$@"; }

# The modules whose version the upstream decides: those providing a package
# that pkg/ (or its tests) imports directly.
mapfile -t ours < <(cd "$root" && go list -f '{{join .Imports "\n"}}{{"\n"}}{{join .TestImports "\n"}}{{"\n"}}{{join .XTestImports "\n"}}' ./pkg/... |
  sort -u | grep '\.' | grep -v "^$self/" | xargs go list -f '{{with .Module}}{{.Path}}{{end}}' | sort -u)

for up in "${upstreams[@]}"; do
  echo "== compat: pkg/ against the dependency versions of $up"
  upmod=$(go mod download -json "$up" | modreqs gomod)
  work=$(mktemp -d)
  trap 'rm -rf "$work" "$tools"' EXIT
  mkdir -p "$work/lib"
  cp -R "$root/pkg/." "$work/lib/"
  # Rewrite imports the way the apply step does.
  grep -rl --include='*.go' "$self/pkg/" "$work/lib" | xargs -r sed -i "s#$self/pkg/#holdfast.compat/lib/#g"
  goline=$(go mod edit -json "$upmod" | modreqs go)
  {
    echo "module holdfast.compat"
    echo
    echo "go $goline"
  } >"$work/go.mod"
  for m in "${ours[@]}"; do
    v=$(go mod edit -json "$upmod" | modreqs version "$m")
    if [ -z "$v" ]; then
      echo "compat: $up does not depend on $m; pkg/ may only import what every upstream already has" >&2
      exit 1
    fi
    (cd "$work" && go mod edit -require="$m@$v")
  done
  (
    cd "$work"
    go mod tidy >/dev/null
    # Fail if tidy had to raise any version the upstream pins: the copied code
    # would then not build in the upstream tree with its own go.mod.
    for m in "${ours[@]}"; do
      want=$(go mod edit -json "$upmod" | modreqs version "$m")
      got=$(go list -m -f '{{.Version}}' "$m")
      if [ "$want" != "$got" ]; then
        echo "compat: $m resolved to $got, but $up pins $want" >&2
        exit 1
      fi
    done
    # vet and test with the toolchain that compiles the shipped binaries
    # (internal/pipeline/build.Toolchain); the go line above stays upstream's.
    GOTOOLCHAIN=$toolchain go vet ./...
    GOTOOLCHAIN=$toolchain go test -count=1 ./...
  )
  rm -rf "$work"
done
