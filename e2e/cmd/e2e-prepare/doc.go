// Command e2e-prepare builds ahead what the end-to-end suites would
// otherwise build when they start: the tool cache's programs (etcd,
// kube-apiserver with the node's kubelet, kube-controller-manager,
// kube-scheduler and kube-proxy, cosign, govulncheck, ...), Karmada's
// unshipped components of both trees, and the node suite's stand-in images
// (CoreDNS, cfssl and upstream's binaries among them).
//
// `make test` runs it (as `make e2e-prepare`, niced) beside upstream-test,
// which mostly waits on the trees' bounded RED runs: on a cold machine these
// builds are about ten minutes of two cores that every suite of `make e2e`
// would otherwise wait for at its start. Everything it builds is keyed by
// version and content (internal/toolcache, internal/pipeline/treebin,
// internal/harness/standin), so the suites find it and build nothing; run
// alone, it is what the suites' first use would do, in a fixed order.
//
// -phase early builds what the suites on a control plane and the node
// start on; -phase late the tools only the vulnerability, signing, release,
// tool and chart tests use (`make e2e-prepare E2E_PREPARE_PHASE=...`).
// `make test` builds both before the suites: building the late tools
// beside them cost the node suite its Karmada install (see the Makefile).
package main
