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
	  /^[a-zA-Z0-9_.-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

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
# One pass with both tags: no file is built only without them (no !e2e or
# !scale constraint), so it vets every file the plain build has, and a cold
# run loads and type-checks the packages once instead of three times.
vet: ## Run go vet on every package, e2e- and scale-tagged test files included.
	$(GO) vet -tags e2e,scale $(PKGS)

.PHONY: docs
docs: ## Rewrite the generated sections of docs/ (adopting.md's build, compatibility.md's artifacts) from pins.txt and patches/*/*/overrides; make unit fails when they are stale.
	$(GO) run ./docs/gen

.PHONY: lint-workflows
lint-workflows: ## actionlint (rhysd/actionlint, built once into .cache/tools) on .github/workflows/.
	@actionlint="$$($(HOLDFAST) tools path actionlint)"; \
	echo "$$actionlint -shellcheck= -pyflakes="; \
	"$$actionlint" -shellcheck= -pyflakes=

.PHONY: unit
unit: ## Unit tests of every package, with the race detector.
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

.PHONY: compat
compat: ## Build and test pkg/ against each upstream's own dependency versions.
	hack/check-compat.sh

.PHONY: upstream-test
upstream-test: ## In each default pin's patched tree: touched upstream packages + carried libraries; regression RED on pristine, GREEN on patched.
	for u in $(UPSTREAMS); do $(HOLDFAST) test --upstream $$u; done

.PHONY: matrix
matrix: ## upstream-test and binaries for every pinned version (all three Karmada minors).
	for u in $(UPSTREAMS); do $(HOLDFAST) test --upstream $$u --all && $(HOLDFAST) build --upstream $$u --all; done

# `make test` is the gate CI runs: its e2e report is strict, so a skipped,
# unmet or missing scenario (e2ereport.Catalog) fails it. `make e2e` alone
# stays lenient, so a partial run (E2E_RUN) still writes its report.
test: E2E_REPORT_FLAGS := --strict
.PHONY: test
test: disk-check verify lint-workflows unit compat upstream-test+e2e-prepare ## Every test: static checks, workflow lint, unit (-race), compat, upstream-test (the e2e suites' builds beside it), e2e suites, chart tests (README's second command).
	@$(MAKE) --no-print-directory E2E_REPORT_FLAGS='$(E2E_REPORT_FLAGS)' e2e-suites charts-suite

# upstream-test mostly waits: its RED runs on the pristine trees wait out
# their bounds, and a cold run of it left the two cores idle about half of
# its 16 minutes. `make test` builds the e2e suites' inputs beside it
# (e2e-prepare, niced so that the trees' tests keep the cores they ask
# for); every suite then starts on built tools, binaries and stand-in
# images instead of waiting for them. The inner make is -j1: e2e-prepare's
# own steps share trees and must not run at once.
#
# The late tools (E2E_PREPARE_PHASE=late: govulncheck, its database, cosign,
# promtool, ...) are not built beside the suites. Two cold runs did
# (2026-12-07): the first lost the node suite's Karmada install (a test built
# cosign at normal priority); the second, with every tool build niced
# (toolcache.BuildNice), saved nothing: the suites kept both cores busy
# until the control-plane suite ended, the niced builds waited, and the
# signing, release and vulnerability tests waited on them.
.PHONY: upstream-test+e2e-prepare
upstream-test+e2e-prepare:
	@$(MAKE) --no-print-directory -j2 upstream-test e2e-prepare-niced

.PHONY: e2e-prepare-niced
e2e-prepare-niced:
	@nice -n 10 $(MAKE) --no-print-directory -j1 e2e-prepare

.PHONY: disk-check
disk-check: ## Free disk where make test writes (Go caches, checkout, temporary files); warns below what a cold run needs.
	hack/disk-check.sh

.PHONY: bench
bench: ## Benchmarks: per-request cost of the member token transport against client-go's paths.
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./pkg/membercred/

# Mutation testing (hack/mutate.sh, go-gremlins/gremlins from .cache/tools):
# every package under pkg/ and the gate packages the release trusts, one
# gremlins run each. Select some with PKGS_MUTATE=./pkg/hubfollow/ (folders,
# space-separated); results and surviving mutants in _output/reports/mutate/.
PKGS_MUTATE ?= $(sort $(wildcard pkg/*/)) ./internal/pipeline/treetest/ ./internal/pipeline/release/ ./internal/e2ereport/ ./internal/pipeline/patchset/ ./internal/supplychain/vulnreport/
# One mutant at a time by default: each is a go build plus its package's tests.
MUTATE_WORKERS ?= 1
MUTATE_TIMEOUT_COEFFICIENT ?= 10

.PHONY: mutate
mutate: ## Mutation testing (gremlins) of pkg/ and the gate packages, not part of test: make mutate [PKGS_MUTATE=./pkg/hubfollow/]; see docs/testing.md.
	@gremlins="$$($(HOLDFAST) tools path gremlins)"; \
	echo "hack/mutate.sh $(PKGS_MUTATE)"; \
	GREMLINS="$$gremlins" WORKERS=$(MUTATE_WORKERS) TIMEOUT_COEFFICIENT=$(MUTATE_TIMEOUT_COEFFICIENT) \
	  OUTPUT_DIR=$(OUTPUT_DIR) hack/mutate.sh $(PKGS_MUTATE)

FUZZTIME ?= 30s
.PHONY: fuzz
# The targets are found, not listed: a hand-kept list missed two of five
# (FuzzParseCABundle, FuzzDecodeClaimMatchesUnstructured).
fuzz: ## Run every fuzz target for FUZZTIME each (default 30s); new failures land in testdata/fuzz.
	@set -e; for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' cmd internal pkg | xargs -n1 dirname | sort -u); do \
	  for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$dir/*_test.go | sort); do \
	    echo "fuzz: $$target in ./$$dir"; \
	    $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) ./$$dir/; \
	  done; \
	done

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

# --- end-to-end suites (e2e/) ---------------------------------------------

# Go test flags for the suites; E2E_RUN selects scenarios (go test -run).
E2E_TIMEOUT ?= 40m
E2E_RUN ?=
# How many e2e packages run at once. The suites mostly wait on real
# conditions (token caches, negative windows, process exits) while the
# tool-building packages (cosign for signing) compile: four at a time
# overlaps the waits with the compiles instead of queueing a waiting suite
# behind a compiling one on 2 cores. go test's default is GOMAXPROCS.
E2E_PARALLEL ?= 4
# e2e-report's flags; `make test` sets --strict (see test).
E2E_REPORT_FLAGS ?=
# The suites, and the packages under internal/ whose e2e-tagged tests (the
# control-plane harness suite, the tool builds, the vulnerability scans with
# the real govulncheck, signing and the signed release with the real cosign,
# the node's stand-in images against the rendered Karmada chart) run with them.
E2E_PKGS := ./e2e/... ./internal/harness/controlplane/ ./internal/harness/karmadacp/ ./internal/toolcache/ ./internal/supplychain/vulnreport/ ./internal/supplychain/signing/ ./internal/pipeline/release/ ./internal/harness/standin/
# The Karmada binaries the suites run (patched and pristine): every shipped
# binary (internal/harness/karmadacp.Shipped) for the suite on a real control plane.
KARMADA_E2E_BINARIES := karmada-controller-manager,karmada-search,karmada-metrics-adapter,karmada-scheduler-estimator,karmada-agent

.PHONY: e2e-binaries
e2e-binaries: ## The binaries the e2e suites run: patched and pristine karmada-controller-manager, -search, -metrics-adapter, -scheduler-estimator, -agent and worker-operator.
	$(HOLDFAST) build --upstream karmada --only $(KARMADA_E2E_BINARIES)
	$(HOLDFAST) build --upstream karmada --only $(KARMADA_E2E_BINARIES) --pristine
	$(HOLDFAST) build --upstream workeroperator
	$(HOLDFAST) build --upstream workeroperator --pristine

# The real node's runtime (Debian's containerd, runc, CNI plugins,
# iptables): installed when missing on Debian/Ubuntu as root, else one line
# saying how (hack/node-deps.sh), so the node suite never skips unnoticed.
.PHONY: node-deps
node-deps: ## The node suite's runtime: containerd, runc, containernetworking-plugins, iptables (apt-get as root when missing).
	hack/node-deps.sh

# What the node suite installs as users get it: the worker image's OCI
# layout (both platforms) and the charts that pull it by digest. The Karmada
# scenario's karmada-controller-manager is built for the node's platform
# only, into its own folder: in _output/images it would make the Karmada
# images partial, which charts build refuses; the Karmada chart then
# renders tags.
.PHONY: e2e-node-inputs
e2e-node-inputs: ## The node suite's inputs: the worker-operator image (OCI layout), karmada-controller-manager, karmada-scheduler-estimator and karmada-agent (amd64, _output/node-images) and the charts.
	$(HOLDFAST) images build --upstream workeroperator
	$(HOLDFAST) images build --upstream karmada --only karmada-controller-manager,karmada-scheduler-estimator,karmada-agent --platforms linux/amd64 --out $(OUTPUT_DIR)/node-images
	$(HOLDFAST) charts build --out $(OUTPUT_DIR)/charts

# What the suites would build when they start, built ahead (e2e/cmd/e2e-prepare):
# `make test` runs it beside upstream-test.
.PHONY: e2e-prepare
E2E_PREPARE_PHASE ?= all
e2e-prepare: e2e-binaries node-deps e2e-node-inputs ## Build ahead what the e2e suites build at their start: tool cache (etcd, kube-apiserver and the node's programs, cosign, govulncheck, ...), Karmada's unshipped components, the node's stand-in images (E2E_PREPARE_PHASE=early|late: part of it).
	$(GO) run ./e2e/cmd/e2e-prepare -phase $(E2E_PREPARE_PHASE)

.PHONY: e2e
e2e: e2e-binaries node-deps e2e-node-inputs ## End-to-end suites on real etcd + kube-apiserver processes (Karmada on a real control plane: propagation, rotation, search, metrics, two members, own credential, karmada-agent in pull mode: token rotation, its own certRotation through a real CSR, own credential; karmada-scheduler-estimator over gRPC: token, client-certificate and CA rotation; worker hub failover, own credential and chart RBAC; a real node: pods, kubelet restarts, the worker chart with two hubs and without, the Karmada chart with its drop-in, rotations, own credential, the scheduler estimator's certificate, CA and token rotations and an agent in pull mode, its certificate rotated and then rejected for good); report in _output/reports/e2e.md|json.
	@$(MAKE) --no-print-directory e2e-suites

# The suites alone, on inputs already built. `make test` runs this after
# e2e-prepare built them (from its recipe, so that even `make -j test`
# cannot start the suites before their inputs exist): re-running e2e's
# prerequisites there only relinked every binary and rebuilt the images,
# 2.5 minutes of a cold run.
.PHONY: e2e-suites
e2e-suites: ## The e2e suites alone, on the inputs e2e-binaries, node-deps and e2e-node-inputs built (make test runs it after e2e-prepare); report in _output/reports/e2e.md|json.
	$(if $(E2E_RUN),,rm -f $(OUTPUT_DIR)/reports/e2e/*.json)
	rc=0; $(GO) test -tags e2e -count=1 -p $(E2E_PARALLEL) -timeout $(E2E_TIMEOUT) $(if $(E2E_RUN),-run '$(E2E_RUN)') $(E2E_PKGS) || rc=$$?; \
	$(GO) run ./e2e/cmd/e2e-report $(E2E_REPORT_FLAGS) || { [ $$rc -ne 0 ] || rc=1; }; exit $$rc

# --- vulnerabilities (internal/supplychain/vulnreport) ----------------------

.PHONY: vulns
vulns: ## govulncheck on the default pins' patched binaries (after make binaries), offline against the pinned vulndb snapshot: _output/reports/vulnerabilities/ (SUMMARY.md, per-binary JSON).
	$(HOLDFAST) vulns --out $(OUTPUT_DIR)/reports

# --- Karmada on a real control plane alone (e2e/karmadacp) ----------------

# The suite and the harness whose e2e-tagged test starts one control plane;
# both are in `make e2e` too. This target runs only them, keeping the other
# suites' reports.
E2E_KARMADA_CP_PKGS := ./e2e/karmadacp/ ./internal/harness/karmadacp/

.PHONY: e2e-karmada-cp
e2e-karmada-cp: e2e-binaries ## Only the suite on a real Karmada control plane (aggregated API server, webhook, scheduler, controller-manager, search, metrics-adapter; part of e2e); report merged into _output/reports/e2e.md|json.
	rc=0; $(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) $(if $(E2E_RUN),-run '$(E2E_RUN)') $(E2E_KARMADA_CP_PKGS) || rc=$$?; \
	$(GO) run ./e2e/cmd/e2e-report $(E2E_REPORT_FLAGS) || { [ $$rc -ne 0 ] || rc=1; }; exit $$rc

# --- scale: a rotation storm across K members (e2e/scale) ------------------

# Fleet sizes (comma-separated) and each storm's wait for recovery;
# MERGE=1 keeps the other fleet sizes of the report already there (of the
# same STATUS_PERIOD). STATUS_PERIOD is the controller-manager's
# --cluster-status-update-frequency; empty is upstream's 10s.
# MEMBER_APISERVERS is how many member kube-apiservers carry the K
# Clusters at most (empty: 3). CONTROLLER_MANAGER_FLAGS are added to both
# builds' controller-manager (--name=value, space-separated). It builds
# the Karmada binaries e2e-binaries builds (not the worker's).
K ?= 10,50,100
SCALE_TIMEOUT ?= 60s
MERGE ?=
STATUS_PERIOD ?=
MEMBER_APISERVERS ?=
CONTROLLER_MANAGER_FLAGS ?=

.PHONY: scale
scale: ## Rotation storm across K member clusters (not part of test): make scale [K=10,50,100] [SCALE_TIMEOUT=60s] [STATUS_PERIOD=10s] [MEMBER_APISERVERS=3] [CONTROLLER_MANAGER_FLAGS=...] [MERGE=1]; report in _output/reports/scale.md|json, profiles in _output/reports/scale/; see docs/scale.md.
	$(HOLDFAST) build --upstream karmada --only $(KARMADA_E2E_BINARIES)
	$(HOLDFAST) build --upstream karmada --only $(KARMADA_E2E_BINARIES) --pristine
	SCALE_K=$(K) SCALE_TIMEOUT=$(SCALE_TIMEOUT) SCALE_STATUS_PERIOD=$(STATUS_PERIOD) SCALE_MEMBER_APISERVERS=$(MEMBER_APISERVERS) SCALE_CONTROLLER_MANAGER_FLAGS="$(CONTROLLER_MANAGER_FLAGS)" SCALE_MERGE=$(MERGE) $(GO) test -tags scale -count=1 -timeout 180m -run '^TestScale$$' -v ./e2e/scale/

.PHONY: scale-report
scale-report: ## Judge _output/reports/scale.json again and render scale.md and its charts (scale-p99.svg, scale-requests.svg) from it, without measuring again (after a change of the targets' rules); see docs/scale.md.
	$(GO) run ./e2e/cmd/scale-report

# --- images (internal/pipeline/image, images/) ------------------------------

# Platforms the images are built for; linux/amd64 and linux/arm64 are what
# Karmada and KubeSlice publish.
PLATFORMS ?= linux/amd64,linux/arm64
# Registry (and namespace) images are pushed to; charts go to $(REGISTRY)/charts.
REGISTRY ?=
# PLAIN_HTTP=1 for a local registry without TLS; INSECURE=1 to skip TLS verification.
PLAIN_HTTP ?=
INSECURE ?=

.PHONY: images
images: ## Container images of every upstream's default pin (both platforms): OCI layouts, docker tarballs, SBOMs under _output/images/.
	$(HOLDFAST) images build --platforms $(PLATFORMS)

.PHONY: images-push
images-push: ## Push images with SBOMs (and, FROM a release's images/, signatures): make images-push REGISTRY=ghcr.io/holdfast-dist [FROM=_output/release/vX.Y.Z/images] [PLAIN_HTTP=1 | INSECURE=1].
	@[ -n "$(REGISTRY)" ] || { echo "usage: make images-push REGISTRY=<registry>/<namespace> [FROM=_output/release/vX.Y.Z/images] [PLAIN_HTTP=1 | INSECURE=1]"; exit 2; }
	$(HOLDFAST) images push --registry $(REGISTRY) $(if $(FROM),--out $(FROM)) $(if $(PLAIN_HTTP),--plain-http) $(if $(INSECURE),--insecure)

.PHONY: images-test
images-test: ## Image tests alone: assembly, SBOM, reproducibility, Dockerfiles, the real images through an in-process registry.
	$(GO) test -race -count=1 ./internal/pipeline/image/ ./internal/pipeline/imagebuild/
	$(GO) test -count=1 -timeout 30m -run TestImagesRealUpstreams ./cmd/holdfast/

# --- charts (charts/, internal/pipeline/charts) -----------------------------

.PHONY: charts
charts: ## Helm charts of the default pins (karmada, worker-operator), packaged into _output/charts/; images by digest when _output/images holds them, else by tag.
	$(HOLDFAST) charts build --out $(OUTPUT_DIR)/charts

.PHONY: charts-push
charts-push: ## Push _output/charts/ to <REGISTRY>/charts over OCI: make charts-push REGISTRY=ghcr.io/holdfast-dist [PLAIN_HTTP=1] (helm registry login first).
	@[ -n "$(REGISTRY)" ] || { echo "usage: make charts-push REGISTRY=<registry>/<namespace> [PLAIN_HTTP=1]"; exit 2; }
	$(HOLDFAST) charts push --out $(OUTPUT_DIR)/charts --registry oci://$(REGISTRY)/charts $(if $(PLAIN_HTTP),--plain-http)

.PHONY: charts-test
charts-test: ## Chart tests with the real helm: lint, render, schema, install into a real kube-apiserver, OCI push/pull, rollback to upstream's image.
	$(HOLDFAST) build --upstream karmada --only karmada-controller-manager,karmada-scheduler-estimator,karmada-agent
	$(HOLDFAST) build --upstream karmada --only karmada-controller-manager,karmada-scheduler-estimator,karmada-agent --pristine
	@$(MAKE) --no-print-directory charts-suite

# The chart tests alone; `make test` runs them after e2e-prepare built every
# binary they need (e2e-binaries is a superset of charts-test's builds).
.PHONY: charts-suite
charts-suite: ## The chart tests alone, on binaries already built (make test runs it after e2e-prepare).
	$(GO) test -tags e2e -count=1 -timeout 30m ./internal/pipeline/charts/

# --- release ----------------------------------------------------------------

# How `make release` signs: a cosign key file (password in COSIGN_PASSWORD)
# or KMS URI, keyless (the release workflow's OIDC identity), or not at all.
SIGNING_KEY ?=
SIGNING ?=
UNSIGNED ?=
TLOG ?=
RELEASE_SIGNING = $(if $(SIGNING_KEY),--sign-key $(SIGNING_KEY)) $(if $(filter keyless,$(SIGNING)),--keyless) \
	$(if $(UNSIGNED),--unsigned) $(if $(TLOG),--tlog-upload)

# The pristine twins the release notes' side-by-side table scans: upstream
# as released, built by default with go1.26.8, the Go this build machine
# ships, because the only other release approved here is go1.27.3.
# UPSTREAM_GO=upstream builds each twin with the Go its go line implies
# (Karmada v1.18.2's go 1.25.10 is go1.25.10, worker-operator v1.6.4's go
# 1.24.0 is go1.24.0), fetched by the go command through the module proxy,
# where a machine may use those; UPSTREAM_GO=goX.Y.Z names one release.
# `holdfast vulns --pristine` names the implied and the used Go in the table.
UPSTREAM_GO ?= go1.26.8

.PHONY: upstream-go-twins
upstream-go-twins: ## Released twins (upstream's releases, their own dependency versions) for the release notes' side-by-side table in _output/bin-upstream-go/, built with go1.26.8 (UPSTREAM_GO=upstream: the Go each go line implies; UPSTREAM_GO=goX.Y.Z).
	$(HOLDFAST) build --upstream karmada --released --toolchain $(UPSTREAM_GO) --bin $(OUTPUT_DIR)/bin-upstream-go
	$(HOLDFAST) build --upstream workeroperator --released --toolchain $(UPSTREAM_GO) --bin $(OUTPUT_DIR)/bin-upstream-go

.PHONY: release
release: ## Release the default pins, signed: make release VERSION=vX.Y.Z SIGNING_KEY=cosign.key | SIGNING=keyless | UNSIGNED=1 [TLOG=1]; see docs/release.md.
	@[ -n "$(VERSION)" ] || { echo "usage: make release VERSION=vX.Y.Z SIGNING_KEY=cosign.key | SIGNING=keyless | UNSIGNED=1"; exit 2; }
	$(HOLDFAST) release --preflight --version $(VERSION) $(RELEASE_SIGNING)
	$(MAKE) pins-verify patch binaries unit upstream-test e2e images charts upstream-go-twins
	$(HOLDFAST) release --version $(VERSION) $(RELEASE_SIGNING)

.PHONY: rebase
rebase: ## Try the series on another upstream tag: make rebase UPSTREAM=karmada VERSION=vX.Y.Z [UPDATE_PINS=1].
	@for v in UPSTREAM=$(UPSTREAM) VERSION=$(VERSION); do \
	  [ -n "$${v#*=}" ] || { echo "make rebase: $${v%%=*} is not set; usage: make rebase UPSTREAM=karmada VERSION=vX.Y.Z [UPDATE_PINS=1]" >&2; exit 2; }; \
	done
	$(HOLDFAST) rebase --upstream $(UPSTREAM) --version $(VERSION) $(if $(UPDATE_PINS),--update-pins)

.PHONY: watch
watch: ## List upstream tags newer than the pins and rebase onto each: make watch [UPSTREAM=karmada] [PRE_RELEASES=1] (report in _output/watch/).
	$(HOLDFAST) watch $(if $(UPSTREAM),--upstream $(UPSTREAM)) $(if $(PRE_RELEASES),--pre-releases)

.PHONY: clean
clean: ## Remove build output (keeps the tool cache in .cache/).
	rm -rf $(OUTPUT_DIR)
