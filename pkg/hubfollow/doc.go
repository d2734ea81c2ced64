// Package hubfollow lets a KubeSlice worker follow its controller when the
// controller runs Active/Standby on two hub clusters.
//
// A worker cannot learn about a failover from the hub that just failed, so
// each hub publishes status.activeController on this worker's own Cluster CR
// while it leads, and the Standby mirrors the Active's declaration. The worker
// reads that field from both pre-provisioned hubs, each with the credential
// that hub minted for it, and decides which one to talk to.
//
// # The rule
//
// An unreachable hub has no say; a hub that published nothing has no say
// (every non-HA hub looks like that). A claim naming an endpoint outside the
// configured pair is rejected, logged and counted: the field selects among
// hubs an operator provisioned, so a Cluster CR can never point the worker at
// an arbitrary address, and the connection used is always the configured
// endpoint together with its own token and CA file (Connection); the claim's
// caBundle is validated but never trusted. Agreement wins. Disagreement
// prefers the fresher lastUpdated, then the lexically smaller identity, so the
// answer during a split brain is single-valued. Nothing usable means change
// nothing: a worker that disconnected whenever it was unsure would turn every
// hub blip into a worker outage. Endpoints are compared after normalisation
// (see normalizeEndpoint), so equivalent URLs match and different ones never
// do.
//
// The first winner, with nothing connected yet, is taken as it stands.
// Afterwards a change needs HUB_SWITCH_CONFIRMATIONS consecutive polls naming
// the same new hub, compared on identity and endpoint only (the Active
// republishes lastUpdated on a timer; including it would reset every
// confirmation). A poll that names the connected hub or has no usable answer
// resets the streak. Every read is bounded by HUB_RESOLVE_TIMEOUT through
// both the request context and the HTTP client's Timeout, because an API
// server that accepts a connection and stops answering otherwise holds a read
// until the OS TCP timeout.
//
// # Restart instead of reconnect
//
// Start runs before the worker builds any hub client and returns the
// Connection to build them from; with HUB_SECONDARY_HOST_ENDPOINT unset it
// returns the primary without building or contacting anything, so a non-HA
// worker is unchanged. Follower.Run then polls; on a confirmed change it logs
// once, counts the switch and calls the worker's stop function so the process
// exits 0 and the kubelet restarts it, and startup resolution picks the new
// Active. The worker's hub clients and manager are assembled once from a
// rest.Config, and its hub manager already exits the process on hub errors,
// so a clean restart is the smaller change and the one the process is built
// for. The data plane (gateways, tunnels) runs in other pods and is not
// touched.
//
// # What it draws on
//
// client-go's rest client for a plain GET of the Cluster CR, its file-based
// bearer token and CA handling (so a rotated token is re-read),
// rest.Config.Wrap for a response-size cap; apimachinery's json (the API
// server's case-sensitive decoding) for the claim, decoded into a struct of
// status.activeController alone, because the released kubeslice/apis modules
// lack the field and decoding the whole object unstructured would let a
// hostile hub turn the 4 MiB cap into ~200 MiB of maps (see decodeClaim);
// k8s.io/utils/clock for the poll interval; logr for logs; client_golang for
// metrics (kubeslice_worker_hub_switches_total,
// kubeslice_worker_hub_probe_errors_total{hub,reason},
// kubeslice_worker_hub_credential_accepted{hub},
// kubeslice_worker_hub_active{hub}, kubeslice_worker_hub_claim_state{state}:
// no_claim is what every worker whose hubs run a released KubeSlice
// controller sees, and then it can never switch). Imports are limited to what every pinned
// upstream already depends on, because this package is copied into the
// worker-operator tree. Operator documentation: docs/hub-failover.md.
package hubfollow
