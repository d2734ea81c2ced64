package worker

import (
	"encoding/base64"
	"time"
)

// activeClaim is what a hub controller publishes in status.activeController
// on the worker's Cluster while it leads (and what the Standby mirrors).
type activeClaim struct {
	Identity string
	Endpoint string
	// CABundle is the Active hub's CA (PEM). The worker checks it is well
	// formed and never trusts it, verifying each hub with its mounted CA.
	CABundle    []byte
	LastUpdated time.Time
}

// statusField renders the claim as the unstructured value of
// status.activeController. lastUpdated carries nanoseconds: the test may
// publish two claims within one second, and a disagreement between the hubs
// is settled by the fresher lastUpdated, so whole seconds would tie.
func (c activeClaim) statusField() map[string]interface{} {
	return map[string]interface{}{
		"endpoint":       c.Endpoint,
		"caBundle":       base64.StdEncoding.EncodeToString(c.CABundle),
		"activeIdentity": c.Identity,
		"lastUpdated":    c.LastUpdated.UTC().Format(time.RFC3339Nano),
	}
}
