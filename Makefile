# holdfast: a downstream distribution carrying an audited patch series onto
# pinned upstream releases of Karmada and KubeSlice worker-operator.
#
# Every verb a user needs is listed by `make help`; each line after `##` is
# the help text. Keep it true when adding or changing a verb.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := all

GO ?= go
OUTPUT_DIR ?= _output
# Packages built and tested here; pkg/ is the library carried into upstream trees.
PKGS ?= ./...
# The holdfast CLI (cmd/holdfast): pins, pristine source, patch series, rebase.
HOLDFAST ?= $(GO) run ./cmd/holdfast
# Upstreams with a pin; `make patch` and friends act on each one's default pin.
UPSTREAMS ?= karmada workeroperator

.PHONY: help
help: ## List every verb.
	@awk 'BEGIN {FS = ":.*## "; printf "Usage: make <verb> [VAR=value]\n\nVerbs:\n"} \
	  /^[a-zA-Z0-9_.-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: all
all: verify build binaries ## The main job: verify, patch and build the default pins of every upstream (README's first command).

.PHONY: build
build: ## Compile every package and tool of this repository.
	$(GO) build $(PKGS)

.PHONY: verify
verify: fmt-check vet ## Static checks: gofmt and go vet.

.PHONY: fmt-check
fmt-check: ## Fail if any Go file is not gofmt-clean.
	@out=$$(find . \( -path ./_output -o -path ./.cache -o -path ./.git \) -prune -o -name '*.go' -print | xargs gofmt -l); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

.PHONY: vet
vet: ## Run go vet on every package.
	$(GO) vet $(PKGS)

.PHONY: unit
unit: ## Unit tests of every package, with the race detector.
	$(GO) test -race -count=1 $(PKGS)

.PHONY: compat
compat: ## Build and test pkg/ against each upstream's own dependency versions.
	hack/check-compat.sh

.PHONY: upstream-test
upstream-test: ## In each default pin's patched tree: touched upstream packages + carried libraries; regression RED on pristine, GREEN on patched.
	for u in $(UPSTREAMS); do $(HOLDFAST) test --upstream $$u; done

.PHONY: matrix
matrix: ## upstream-test and binaries for every pinned version (all three Karmada minors).
	for u in $(UPSTREAMS); do $(HOLDFAST) test --upstream $$u --all && $(HOLDFAST) build --upstream $$u --all; done

.PHONY: test
test: verify unit compat upstream-test ## Every test: static checks, unit tests (-race), compat, upstream-test (README's second command).

.PHONY: bench
bench: ## Benchmarks: per-request cost of the member token transport against client-go's paths.
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./pkg/membercred/

FUZZTIME ?= 30s
.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (default 30s); new failures land in testdata/fuzz.
	$(GO) test -run '^$$' -fuzz '^FuzzSecretToken$$' -fuzztime $(FUZZTIME) ./pkg/membercred/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeClaim$$' -fuzztime $(FUZZTIME) ./pkg/hubfollow/

.PHONY: pins-verify
pins-verify: ## Download every pinned upstream and check it against its h1: hash.
	$(HOLDFAST) pins verify

.PHONY: patch
patch: ## Patched tree (and pristine twin) of every upstream's default pin under _output/trees/.
	for u in $(UPSTREAMS); do $(HOLDFAST) apply --upstream $$u; done

.PHONY: patch-matrix
patch-matrix: ## Patched trees of every pinned version of every upstream.
	for u in $(UPSTREAMS); do $(HOLDFAST) apply --upstream $$u --all; done

.PHONY: binaries
binaries: ## Patched binaries with provenance for every upstream's default pin, into _output/bin/<upstream>-<version>/.
	for u in $(UPSTREAMS); do $(HOLDFAST) build --upstream $$u; done

.PHONY: rebase
rebase: ## Try the series on another upstream tag: make rebase UPSTREAM=karmada VERSION=vX.Y.Z [UPDATE_PINS=1].
	@[ -n "$(UPSTREAM)" ] && [ -n "$(VERSION)" ] || { echo "usage: make rebase UPSTREAM=karmada VERSION=vX.Y.Z [UPDATE_PINS=1]"; exit 2; }
	$(HOLDFAST) rebase --upstream $(UPSTREAM) --version $(VERSION) $(if $(UPDATE_PINS),--update-pins)

.PHONY: clean
clean: ## Remove build output (keeps the tool cache in .cache/).
	rm -rf $(OUTPUT_DIR)
