package membercred

import (
	"fmt"
	"time"
)

// Health is a snapshot of one member credential, for a controller to turn
// into a condition or a log line. It never contains the token.
type Health struct {
	// Cluster is the member cluster's name.
	Cluster string
	// Secret is the cluster Secret as "namespace/name".
	Secret string
	// HasToken is false until a token has been obtained (InitialToken or a
	// successful read); until then every request fails without being sent.
	HasToken bool
	// LastRefresh is when the token in use was last confirmed from the Secret
	// (creation time when it came from InitialToken). Zero if never.
	LastRefresh time.Time
	// LastError describes why the most recent read of Secret failed (e.g.
	// `has no "token" key`); empty when it succeeded. LastErrorReason is its
	// bounded reason (Reason* constants).
	LastError       string
	LastErrorReason string
	// ConsecutiveRefreshFailures counts reads that failed since the last
	// successful one; the last good token keeps being used meanwhile.
	ConsecutiveRefreshFailures int
	// ConsecutivePersisted401s counts 401s that persisted after a fresh read
	// of the Secret (the Secret holds a token the member rejects), with no
	// other response in between.
	ConsecutivePersisted401s int
	// TracksCABundle is true once the member's connections verify against
	// the Secret's CA bundle (TrustSecretCABundle). CABundleError and
	// CABundleErrorReason say why the most recent read's bundle was not
	// taken (ReasonCABundle* constants), ConsecutiveCABundleFailures how many
	// reads in a row; the last good bundle keeps being used meanwhile.
	TracksCABundle              bool
	CABundleError               string
	CABundleErrorReason         string
	ConsecutiveCABundleFailures int
}

// Err summarises h as an error, nil when the credential is usable and
// accepted. A refresh failure while a token is cached is reported too: the
// cluster still works, but rotation will not be followed until it is fixed.
func (h Health) Err() error {
	switch {
	case !h.HasToken:
		return fmt.Errorf("member cluster %q: no bearer token from Secret %s: %s", h.Cluster, h.Secret, h.LastError)
	case h.ConsecutivePersisted401s > 0:
		return fmt.Errorf("member cluster %q rejects the token in Secret %s (%d consecutive 401 Unauthorized after re-reading it)", h.Cluster, h.Secret, h.ConsecutivePersisted401s)
	case h.LastError != "":
		return fmt.Errorf("member cluster %q: keeping the last good token; %d reads of Secret %s failed in a row, last: %s", h.Cluster, h.ConsecutiveRefreshFailures, h.Secret, h.LastError)
	case h.CABundleError != "":
		return fmt.Errorf("member cluster %q: keeping the last good CA bundle; %d reads of Secret %s in a row %s", h.Cluster, h.ConsecutiveCABundleFailures, h.Secret, h.CABundleError)
	}
	return nil
}
