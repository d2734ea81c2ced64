package hubfollow

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A refused read says the HTTP status and then, after ": ", the API
// server's own message.
func TestProbeErrorSeparatesStatusAndMessage(t *testing.T) {
	hub := newFakeHub(t, testToken)
	hub.respond(http.StatusForbidden, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"clusters is forbidden"}`)
	p := NewProber(hub.connection(t, PrimaryName), testNamespace, testCluster, 5*time.Second)
	got := p.Probe(context.Background())
	if got.Err == nil || !strings.Contains(got.Err.Error(), "HTTP 403 Forbidden: clusters is forbidden") {
		t.Errorf("Err = %v, want it to contain %q", got.Err, "HTTP 403 Forbidden: clusters is forbidden")
	}
}
