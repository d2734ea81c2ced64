// Package toolcache builds the real programs the end-to-end suites, the
// chart tests, `make lint-workflows`, `make mutate` and `holdfast vulns` run
// (etcd, kube-apiserver with the node's kubelet, kube-controller-manager,
// kube-scheduler and kube-proxy from the same build, helm, actionlint, govulncheck, the vulndb indexer,
// gremlins, promtool, and whatever else a suite adds) from their Go modules, once,
// and caches the binaries by version under
// <repository>/.cache/tools/<name>-<version>.
//
// It lives under internal/ rather than e2e/ because `holdfast charts`
// (cmd/holdfast) and the chart tests use its helm too, and nothing under
// cmd/ or internal/ may import e2e/ (internal/layering).
//
// There is no container engine on the machines the suites run on, so the
// control planes are real processes; building them from Go modules keeps the
// suites free of downloads other than the Go module proxy, which the rest of
// the pipeline needs anyway. Each Tool is built through a generated wrapper
// module (its go.mod plus a tools.go that imports the command), the same way
// one would pin a tool in any Go repository: `go mod tidy` then
// `CGO_ENABLED=0 go build -trimpath`. Those exact flags matter: they make the
// compile steps identical across machines and runs, so the Go build cache
// (warmed by CI or by an earlier run) turns a ten-minute kube-apiserver build
// into a link step. A tool that reads its version from its own build
// information (govulncheck) is built with `go install -trimpath
// PACKAGE@VERSION` instead (Tool.Install), so that its module, not a
// wrapper, is the main module and the version it prints is its release's.
//
// A stamp file beside each binary records a hash of the tool definition and
// the Go version; a changed definition or toolchain rebuilds. A file lock per
// tool makes concurrent test packages (go test runs packages in parallel)
// build it once.
package toolcache
