// Package worker runs holdfast's patched KubeSlice worker-operator, the real
// binary from `holdfast build --upstream workeroperator`, against real control
// planes on loopback and checks what the worker-operator patch
// series claims, from the outside:
//
//   - suite "worker-hub-failover": the worker follows an Active/Standby hub
//     failover (hub-failover.md). Two hub clusters hold the KubeSlice CRDs of
//     the pinned github.com/kubeslice/apis module, with the Cluster CRD's
//     status schema extended by status.activeController (v0.5.0's schema lacks
//     it, and the API server would prune the field); the test plays the hub
//     controllers by writing that field through the status subresource.
//   - suite "worker-own-credential": the worker exits when its own credential
//     on the worker cluster is permanently rejected, and not on one transient
//     401 (worker-operator.md, "Own-credential guard").
//   - suite "worker-chart-rbac": the worker, run as the ServiceAccount of
//     its chart with exactly the RBAC the chart renders (not cluster-admin),
//     syncs every cache and gets no 403 from its cluster or its hub; with
//     pristine v1.6.4's role.yaml it is refused two informers and exits 1
//     after the cache-sync timeout (worker-operator.md, "The worker's RBAC").
//
// What is observed is what an operator could observe: the worker's exit code
// and log lines, its /metrics, the worker's writes to its Cluster CR on each
// hub (status.nodeIPs and registrationStatus are written only by a worker
// connected to that hub), and each hub's audit log (which requests the
// worker's user agent sent there; for worker-chart-rbac also the worker
// cluster's).
//
// It draws on internal/toolcache (etcd and kube-apiserver built from Go modules),
// internal/harness/controlplane (one cluster = etcd + kube-apiserver processes,
// and a Process type for the worker), internal/e2ereport (scenario results and
// timings), internal/pipeline/pins (which binary is the default pin's), and
// internal/pipeline/charts with the tool cache's helm for the chart-RBAC
// suite's rendered manifests. Files that start processes carry the e2e build
// tag; the rest are pure helpers with quick unit tests.
package worker
