// Package karmadacp is the Karmada suite on a real control plane (issue
// 14): karmada-apiserver with karmada-aggregated-apiserver serving
// cluster.karmada.io, Karmada's CRDs, karmada-webhook, karmada-scheduler and
// karmada-controller-manager with its default controller set (and, for the
// metrics scenario, karmada-metrics-adapter), all from the pinned tree
// (internal/harness/karmadacp), and members joined in Push mode as `karmadactl
// join` joins them. Each build runs on its own control plane: pristine
// (every component upstream's code, the pristine twin) and patched (the binaries
// holdfast ships; the other components from the patched tree, which the
// series does not change).
// karmada-controller-manager with its default controller set, and
// karmada-search for the scenario that needs it, all from the pinned tree
// (internal/harness/karmadacp), and members joined in Push mode as `karmadactl
// join` joins them. Each build runs on its own control plane: pristine
// (every component upstream's code, the pristine twin) and patched (the
// controller-manager and karmada-search holdfast ships; the other
// components from the patched tree, which the series does not change).
//
// The scenarios are in files tagged e2e and run with every other suite in
// `make e2e` (and so `make test`); `make e2e-karmada-cp` runs this suite
// alone. Its report is _output/reports/e2e/karmada-control-plane.json.
//
//   - propagation: a PropagationPolicy places a Deployment on member1 (Work
//     Applied, the Deployment on the member); member1's token is rotated,
//     the old one revoked and member1's kube-apiserver SIGKILLed and
//     restarted; a second Deployment and an update of the first must land,
//     and the status the member reports afterwards must be aggregated into
//     Karmada's Deployments. Pristine is expected RED; the report says at
//     which step and quotes the log line.
//   - two-members: member1 and member2 joined, one Deployment placed on each
//     by its own PropagationPolicy; while member1's token is rotated, the
//     old one revoked and member1's kube-apiserver restarted, member2's
//     Deployment is updated a few times a second, and every update must
//     land within a bound, with member2's Cluster Ready, no 401 in
//     member2's audit log and no 401 counted for member2; afterwards two
//     updates must land on member1. The controller-manager's per-cluster
//     counters must show member1 rotated and member2 not (patched).
//     Pristine is expected RED at member1's second update.
//   - metrics: karmada-metrics-adapter runs too; Karmada's metrics.k8s.io
//     serves the PodMetrics of a Pod on member1; after the same rotation,
//     revocation and restart, it must serve those of a Pod created on
//     member1 afterwards, and still those of the first. Pristine is
//     expected RED (its member Pod informer and PodMetrics client keep the
//     token they were built with).
//   - search: karmada-search runs; a ResourceRegistry caches member1's
//     Deployments; one created on member1 must be served by the search
//     API's cache path and its proxy path; member1's token is rotated, the
//     old one revoked, member1 restarted, and a Deployment created on it
//     afterwards must be served by both paths. Pristine is expected RED on
//     the cache path (the ResourceRegistry controller's member informer
//     keeps its frozen token); its proxy path is reported, not required to
//     fail, as it builds a member client from the Secret for each list and
//     watch.
//   - rotation: the same rotation, revocation and restart, then a Node
//     created on member1: the Cluster (read through the aggregated API
//     server) must stay Ready and count the Node in status.nodeSummary (the
//     cluster status controller's long-lived node informer). Pristine RED
//     (the node reflector's 401 quoted), patched GREEN with the time from
//     the member's restart to the Node counted.
//   - late-secret (patched): the old token revoked and member1 restarted
//     before the Secret gets the new token; once it does, an update lands
//     and status is aggregated, and the controller-manager keeps running.
//   - repeated-rotation (patched): issue 16's three rounds 20 s apart
//     (rotation; rotation with the Secret missing 5 s; rotation), each
//     ending in a restart and a new Node: every round recovers, the 401s
//     are hidden, one "Picked up a rotated member cluster token" line per
//     rotation at klog's default verbosity.
//   - repeated-restart (pristine; patched with HOLDFAST_E2E_CONTROLS=1):
//     the same restarts with nothing rotated, the control expected to pass.
//   - own-credential: the controller-manager's own ServiceAccount revoked
//     and karmada-apiserver restarted: the patched build exits through its
//     guard, the pristine one keeps running, refused (RED).
//   - agent-rotation: member1 joined in Pull mode (karmadacp.JoinPull:
//     karmada-agent beside it, its karmada-apiserver kubeconfig in a
//     kubelet-like Secret volume); the agent's token rotated by a ..data
//     swap and the old ServiceAccount revoked, karmada-apiserver restarted,
//     a Deployment updated on Karmada: the patched agent applies it to the
//     member as the same process, the pristine one is refused on every
//     request, its lease unrenewed, still running (RED).
//   - agent-cert-rotation: the same, but the agent authenticates with a
//     client certificate (karmadacp.JoinPullCertificate) and renews it
//     itself: its certRotation controller's CSR approved by
//     karmada-controller-manager, signed by kube-controller-manager's
//     csrsigning controller, written into its Secret on member1, copied
//     into the volume; then the old certificate revoked (its CA removed from
//     karmada-apiserver's --client-ca-file). Patched: applies the update as
//     the same process; pristine: refused with the certificate it read at
//     start though its own controller renewed it (RED).
//   - agent-own-credential (patched): the agent's token revoked with no new
//     one: it exits non-zero through its own-credential guard.
//
// The propagation, two-members, metrics and search scenarios note each
// component's membercred counters per member
// over the rotation (countCredentials), one line per component with a
// metrics endpoint.
//
// These replace the rotation suite that ran one controller-manager against
// a Cluster CRD stand-in (e2e/karmada, now only helpers).
//
// Stand-ins: no kubelet or kube-controller-manager runs on the member, so
// a Deployment there never gets a status of its own; the scenarios write
// the status a member whose pods all run would report (ReadyStatus)
// through the status subresource, as the member's deployment controller
// would. Member Nodes are objects the suite creates, as a kubelet would
// register them.
// Nor does a metrics-server run there: the metrics scenario serves the
// member's metrics.k8s.io from the test process (karmadacp.MemberMetrics,
// fixed usage for each Pod object that exists on the member).
//
// The untagged files are pure helpers (object builders, status readers,
// log evidence) with unit tests that run with `make unit`.
package karmadacp
