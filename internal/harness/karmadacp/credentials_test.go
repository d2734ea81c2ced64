package karmadacp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/holdfast-dist/holdfast/internal/harness/membercredmetrics"
	"github.com/holdfast-dist/holdfast/internal/harness/testpki"
)

const credentialExposition = `# TYPE holdfast_member_credential_refreshes_total counter
holdfast_member_credential_refreshes_total{cluster="member1"} 2
holdfast_member_credential_refreshes_total{cluster="member2"} 1
# TYPE holdfast_member_credential_unauthorized_total counter
holdfast_member_credential_unauthorized_total{cluster="member1"} 3
# TYPE holdfast_member_credential_unauthorized_recovered_total counter
holdfast_member_credential_unauthorized_recovered_total{cluster="member1"} 3
`

// tlsMetricsServer serves credentialExposition at /metrics over TLS with a
// certificate of ca for 127.0.0.1, and answers only clients presenting a
// certificate of clientCA (as an aggregated server's secure port does for
// certificate authentication); it records the Authorization header.
func tlsMetricsServer(t *testing.T, ca, clientCA *testpki.Authority) (srv *httptest.Server, authz *string) {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(testpki.Leaf{CommonName: "metrics", Usage: x509.ExtKeyUsageServerAuth, IPs: []net.IP{net.ParseIP(loopback)}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(clientCA.CertPEM)
	authz = new(string)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		*authz = r.Header.Get("Authorization")
		fmt.Fprint(w, credentialExposition)
	}))
	// The refused handshakes are the point of some cases, not noise.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		MinVersion:   tls.VersionTLS12,
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, authz
}

func TestScrapeMemberCredentialHTTPS(t *testing.T) {
	ca, err := testpki.NewAuthority("test-ca", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	clientCA, err := testpki.NewAuthority("test-client-ca", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv, authz := tlsMetricsServer(t, ca, clientCA)
	clientCert, clientKey, err := clientCA.Issue(testpki.Leaf{CommonName: "admin", Usage: x509.ExtKeyUsageClientAuth}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := testpki.NewAuthority("another-ca", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The admin config trusts karmada-apiserver's CA (here: another one),
	// which must not be what the component's certificate is checked with.
	admin := &rest.Config{
		Host:        "https://127.0.0.1:1",
		BearerToken: "admin-token",
		TLSClientConfig: rest.TLSClientConfig{
			CAData: otherCA.CertPEM, CertData: clientCert, KeyData: clientKey,
		},
	}
	ctx := context.Background()
	u := srv.URL + "/metrics"

	got, served, err := scrapeMemberCredential(ctx, u, "member1", admin, ca.CertPEM)
	if err != nil {
		t.Fatalf("scraping with the admin's client certificate: %v", err)
	}
	if want := (membercredmetrics.MemberCredential{Refreshes: 2, Unauthorized: 3, Recovered: 3}); got != want || !served {
		t.Errorf("member1 = %+v (served %v), want %+v (served)", got, served, want)
	}
	if *authz != "Bearer admin-token" {
		t.Errorf("the admin's bearer token was not sent (Authorization %q)", *authz)
	}
	if got, served, err := scrapeMemberCredential(ctx, u, "member3", admin, ca.CertPEM); err != nil || served || got != (membercredmetrics.MemberCredential{}) {
		t.Errorf("member3 = %+v, served %v, %v; want zero, not served, no error", got, served, err)
	}

	noCert := rest.CopyConfig(admin)
	noCert.CertData, noCert.KeyData = nil, nil
	if _, _, err := scrapeMemberCredential(ctx, u, "member1", noCert, ca.CertPEM); err == nil || !strings.Contains(err.Error(), u) {
		t.Errorf("without a client certificate: error = %v, want the refused handshake, naming %s", err, u)
	}
	if _, _, err := scrapeMemberCredential(ctx, u, "member1", admin, otherCA.CertPEM); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("trusting another CA: error = %v, want the serving certificate refused", err)
	}
	if _, _, err := scrapeMemberCredential(ctx, u, "member1", nil, ca.CertPEM); err == nil || !strings.Contains(err.Error(), "admin credential") {
		t.Errorf("without an admin config: error = %v, want it named", err)
	}
	if _, _, err := scrapeMemberCredential(ctx, u, "member1", admin, nil); err == nil || !strings.Contains(err.Error(), "CA") {
		t.Errorf("without a CA: error = %v, want it named", err)
	}
}

func TestControlPlaneMemberCredential(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, credentialExposition)
	}))
	defer plain.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	cp := &ControlPlane{opts: Options{Name: "karmada-test"}, pki: &pki{}, urls: map[Component]string{
		ControllerManager: plain.URL + "/metrics",
		Scheduler:         down.URL + "/metrics",
		Search:            "ftp://127.0.0.1/metrics",
	}}
	ctx := context.Background()

	got, served, err := cp.MemberCredential(ctx, ControllerManager, "member2")
	if err != nil || !served || got != (membercredmetrics.MemberCredential{Refreshes: 1}) {
		t.Errorf("controller-manager member2 = %+v, served %v, %v; want refreshes 1, served", got, served, err)
	}
	if got, served, err := cp.MemberCredential(ctx, AggregatedAPIServer, "member1"); err != nil || served || got != (membercredmetrics.MemberCredential{}) {
		t.Errorf("a component without a metrics URL = %+v, served %v, %v; want skipped without error", got, served, err)
	}
	if _, _, err := cp.MemberCredential(ctx, Scheduler, "member1"); err == nil || !strings.Contains(err.Error(), string(Scheduler)) {
		t.Errorf("an endpoint that is down: error = %v, want it reported, naming %s", err, Scheduler)
	}
	if _, _, err := cp.MemberCredential(ctx, Search, "member1"); err == nil || !strings.Contains(err.Error(), `scheme "ftp"`) {
		t.Errorf("an unknown scheme: error = %v, want it named", err)
	}

	want := []Component{Scheduler, ControllerManager, Search}
	if got := cp.MetricsComponents(); !slices.Equal(got, want) {
		t.Errorf("MetricsComponents() = %v, want %v", got, want)
	}
}
