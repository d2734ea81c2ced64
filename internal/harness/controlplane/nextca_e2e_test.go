//go:build e2e

package controlplane

import (
	"crypto/tls"
	"errors"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestRestartWithNextCA: kube-apiserver comes back on the same endpoint
// serving a certificate of a CA it never presented. A client that trusts
// only the first CA is refused with a certificate verification error on its
// next connection; one built from CAData afterwards, one trusting both, the
// admin clients and ServiceAccount tokens minted before all keep working.
// With Options.CARotations 2 the same holds for a second switch, to a third
// CA, and a third switch is refused.
func TestRestartWithNextCA(t *testing.T) {
	binaries(t)
	timings := map[string]time.Duration{}
	record(t, "restart-with-next-ca", timings)
	c := StartForTest(t, Options{Name: "nextca", CARotations: 2})
	ctx := t.Context()
	first, next := c.CAData(), c.NextCAData()
	if len(next) == 0 || string(first) == string(next) {
		t.Fatal("no next CA distinct from the first")
	}
	token, err := c.ServiceAccountToken(ctx, "default", "default", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	client := func(ca []byte) kubernetes.Interface {
		t.Helper()
		k, err := kubernetes.NewForConfig(&rest.Config{Host: c.Endpoint(), BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	oldOnly, both := client(first), client(append(append([]byte(nil), first...), next...))
	if _, err := oldOnly.Discovery().ServerVersion(); err != nil {
		t.Fatalf("before the switch, with the first CA: %v", err)
	}

	start := time.Now()
	if err := c.RestartWithNextCA(ctx); err != nil {
		t.Fatal(err)
	}
	timings["restart"] = time.Since(start)
	_, err = oldOnly.Discovery().ServerVersion()
	var verr *tls.CertificateVerificationError
	if !errors.As(err, &verr) {
		t.Fatalf("after the switch, a client trusting only the first CA: got %v, want a certificate verification error", err)
	}
	third := c.NextCAData()
	if string(c.CAData()) != string(next) || len(third) == 0 || string(third) == string(next) || string(third) == string(first) {
		t.Fatal("after the first switch, CAData is not the next CA or NextCAData not a third one")
	}
	accepted := func(when string, clients map[string]kubernetes.Interface) {
		t.Helper()
		for name, k := range clients {
			// A self review needs an accepted credential and no RBAC: it
			// proves TLS and the token minted before the switch together.
			if _, err := k.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); err != nil {
				t.Errorf("%s, %s: %v", when, name, err)
			}
		}
	}
	secondOnly := client(c.CAData())
	accepted("after the switch", map[string]kubernetes.Interface{"new CAData": secondOnly, "both CAs": both, "admin": c.Kubernetes()})

	if err := c.RestartWithNextCA(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.RestartWithNextCA(ctx); err == nil {
		t.Error("a third RestartWithNextCA (CARotations 2) did not fail")
	}
	if _, err := secondOnly.Discovery().ServerVersion(); !errors.As(err, &verr) {
		t.Fatalf("after the second switch, a client trusting only the second CA: got %v, want a certificate verification error", err)
	}
	if string(c.CAData()) != string(third) || len(c.NextCAData()) != 0 {
		t.Fatal("CAData does not hold the third CA after the second switch")
	}
	accepted("after the second switch", map[string]kubernetes.Interface{"new CAData": client(c.CAData()), "admin": c.Kubernetes()})
}
