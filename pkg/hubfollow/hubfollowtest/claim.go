package hubfollowtest

import (
	"encoding/base64"
	"time"
)

// Claim is a hub controller's declaration that it leads, as it publishes it
// in status.activeController (and the Standby mirrors it).
type Claim struct {
	Identity string
	Endpoint string
	// CABundle is the Active hub's CA (PEM); left out of the rendering when
	// empty, as a hub that publishes none does.
	CABundle []byte
	// LastUpdated carries nanoseconds into the rendering: a test may publish
	// two claims within one second, and a disagreement between the hubs is
	// settled by the fresher lastUpdated, so whole seconds would tie.
	LastUpdated time.Time
}

// StatusField renders the claim as the unstructured value of
// status.activeController.
func (c Claim) StatusField() map[string]interface{} {
	f := map[string]interface{}{
		"endpoint":       c.Endpoint,
		"activeIdentity": c.Identity,
		"lastUpdated":    c.LastUpdated.UTC().Format(time.RFC3339Nano),
	}
	if len(c.CABundle) > 0 {
		f["caBundle"] = base64.StdEncoding.EncodeToString(c.CABundle)
	}
	return f
}

// Cluster is the worker's Cluster object in namespace as a hub serves it,
// with status as given (an empty status when nil). The caller may add to it
// (a resourceVersion, a spec) before serving it.
func Cluster(namespace, name string, status map[string]interface{}) map[string]interface{} {
	if status == nil {
		status = map[string]interface{}{}
	}
	return map[string]interface{}{
		"apiVersion": "controller.kubeslice.io/v1alpha1",
		"kind":       "Cluster",
		"metadata":   map[string]interface{}{"name": name, "namespace": namespace},
		"status":     status,
	}
}
