// Package scale measures a member credential rotation storm across a fleet
// of K member clusters on a real Karmada control plane (issue 24), for
// pristine Karmada, pristine plus the operators' workaround (restart
// karmada-controller-manager, karmada-search and karmada-metrics-adapter
// after the rotation) and holdfast's patched build.
//
// It is a measurement, not a gate: `make scale K=10,50,100` runs the
// scale-tagged TestScale, which starts internal/harness/karmadacp's control
// plane (with karmada-search and karmada-metrics-adapter) and a few member
// kube-apiservers (internal/harness/controlplane, each writing an audit log),
// joins K Clusters to them as `karmadactl join` does, each with its own
// ServiceAccount, token Secret, RBAC, namespace, Deployment and
// PropagationPolicy, and a ResourceRegistry caching every Cluster's
// Deployments in karmada-search. Then the storms: every member token
// rotated and revoked at once with the Secrets already updated, and the
// late-Secret storm (revoked first, Secrets written over 10 s). The
// report, _output/reports/scale.md and scale.json, holds per K and variant
// the time to recover per member, the requests the members and
// karmada-apiserver received (their audit logs), the membercred counters,
// the controller-manager's RSS and CPU, and the targets met or
// missed; the patched controller-manager's CPU and heap profiles at the
// largest K sit beside it in _output/reports/scale/.
//
// The untagged files are the pure parts (percentiles, audit counting,
// /proc parsing, the report and its verdicts), unit-tested with `make
// unit`; scale_test.go is tagged scale, so neither `make unit` nor `make
// e2e` starts a fleet.
package scale
