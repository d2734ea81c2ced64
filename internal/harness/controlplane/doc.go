// Package controlplane runs real Kubernetes control planes for the
// end-to-end suites: each Cluster is an etcd and a kube-apiserver started as
// processes on 127.0.0.1, from binaries built by package toolcache.
//
// It lives under internal/ rather than e2e/ because the chart tests
// (internal/pipeline/charts, `make charts-test`) install into such a control
// plane too, and nothing under internal/ may import e2e/ (internal/layering).
//
// There is no container engine on the machines the suites run on, and the
// suites need exactly what a control plane does for real: ServiceAccount
// tokens minted with the TokenRequest API and revoked by deleting the
// ServiceAccount, watches that break when the server goes away, and CRDs
// served with their schemas. Each cluster has its own etcd, ports, CA and
// serving certificate, ServiceAccount signing key and admin token, all made
// per run, so clusters are independent and many run at once.
//
// Restart kills kube-apiserver with SIGKILL and starts it again on the same
// port with the same data: SIGTERM would let it keep serving open watches
// while it drains, and the point of a restart in these suites is to force
// every watch to reconnect, as upstream's e2e does with `docker restart`.
//
// Every process runs in its own process group with Pdeathsig, so neither a
// failed test nor a killed test binary leaves processes or ports behind. The
// package also runs the programs under test (StartProcess) the same way.
//
// Only kube-apiserver runs: no controller-manager, scheduler or kubelet. A
// suite that needs a controller's effect (a Node object, a ServiceAccount)
// creates it through the API.
package controlplane
