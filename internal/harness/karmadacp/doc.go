// Package karmadacp runs a real Karmada control plane for the end-to-end
// suites, the way upstream's hack/deploy-karmada.sh lays one out, from
// processes on 127.0.0.1 instead of pods:
//
//   - karmada-apiserver: internal/harness/controlplane's etcd and
//     kube-apiserver, with the aggregation layer's front-proxy flags
//     (request-header CA, proxy client certificate) upstream's
//     karmada-apiserver.yaml sets;
//   - karmada-aggregated-apiserver, storing Clusters in Karmada's etcd and
//     registered for cluster.karmada.io/v1alpha1 with the tree's APIService;
//   - Karmada's CRDs as the chart's kustomization builds them (with the
//     conversion webhooks of resourcebindings and clusterresourcebindings);
//   - karmada-webhook with the tree's Mutating- and
//     ValidatingWebhookConfiguration;
//   - karmada-scheduler, and karmada-controller-manager with its default
//     controller set and its own ServiceAccount token;
//   - optionally (Options.MetricsAdapter) karmada-metrics-adapter,
//     registered for metrics.k8s.io and custom.metrics.k8s.io with the
//     tree's APIServices (MetricsAdapterAPIServices).
//   - optionally (Options.Search) karmada-search, registered for
//     search.karmada.io/v1alpha1 with the tree's APIService, its metrics
//     on its secure port behind delegated authentication;
//   - optionally (Options.CSRSigning) kube-controller-manager with its
//     csrsigning controller alone (CSRSigner), signing
//     kubernetes.io/kube-apiserver-client CSRs with a CA karmada-apiserver
//     trusts (--client-ca-file), as a real Karmada signs the certificates
//     karmada-agent's certRotation controller asks for.
//
// JoinPush joins a member cluster (another internal/harness/controlplane
// cluster) as `karmadactl join` does, and Member.Rotate rotates its credential
// as an operator would (Member.PrepareRotation splits it, for a storm that
// rotates many members at once). JoinPull joins a member in Pull mode by
// running karmada-agent beside it, its karmada-apiserver kubeconfig in a
// SecretVolume (a kubelet-like Secret volume, ..data swapped on update);
// PullMember.Rotate and Revoke rotate or revoke the agent's own token.
// JoinPullCertificate joins it with a client certificate instead, in the
// member's Secret karmada-system/karmada-kubeconfig as karmadactl register
// writes it, with a kubelet stand-in copying that Secret into the volume;
// PullMember.WithdrawFirstCertificate revokes the first certificate by
// removing its CA from karmada-apiserver's --client-ca-file.
// ControlPlane.Restart restarts one of the ControlPlaneShipped components, the workaround operators use for a rotated member
// credential. ControlPlane.MemberCredential reads one component's
// membercred counters for one member from its metrics endpoint
// (internal/harness/membercredmetrics), over TLS with the admin's credential
// for the aggregated servers' secure ports. MemberMetrics is a stand-in for a
// member's metrics-server (members run no kubelet): PodMetrics of the member's
// Pods, served from the test process through the member's aggregator.
//
// Everything the control plane installs is read from the pinned Karmada
// tree (charts/karmada/_crds, artifacts/deploy), rendered as the deploy
// script renders it; where a process on loopback needs something else than
// a pod does, the difference is one function with the reason beside it:
// the webhooks are called at https://127.0.0.1:<port> instead of their
// Service's DNS name (WebhookConfiguration, CRDs), and the APIService's
// ExternalName Service names localhost (AggregatedAPIService,
// SearchAPIService).
//
// Stand-ins and what is left out, each stated where it is made: no
// kube-controller-manager on karmada-apiserver but CSRSigning's (upstream
// runs one for namespace deletion, garbage collection, ServiceAccount token
// Secrets and CSR signing; nothing else here waits on them), no scheduler estimator, no
// karmada-descheduler (karmada-search and karmada-metrics-adapter run when
// Options ask for them), member tokens minted with the TokenRequest API (JoinPush), default
// feature gates (upstream's deploy script turns on every alpha and beta
// gate), and every component but the controller-manager authenticates as
// karmada-apiserver's admin (upstream gives them a client certificate in
// system:masters, which is the same authority).
//
// The component binaries come from the caller: internal/pipeline/treebin builds
// the ones holdfast does not ship, `holdfast build` the shipped ones
// (EnsureBinaries finds both).
// Logs go to karmada-apiserver's log folder (<component>.log), which
// controlplane.StartForTest keeps for a failed test.
package karmadacp
