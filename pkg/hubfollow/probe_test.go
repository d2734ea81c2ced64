package hubfollow

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

const testToken = "hub-a-token-7f3c" // must never appear in an error or log

func TestProbeClassifiesEveryAnswer(t *testing.T) {
	hub := newFakeHub(t, testToken)
	tests := []struct {
		name    string
		setup   func()
		want    ProbeKind
		wantErr string
	}{
		{name: "claim", setup: func() { hub.publish("hub-b", "https://hub-b:6443", "2026-08-25T16:42:00Z") }, want: ProbeClaim},
		{name: "published nothing", setup: hub.publishNothing, want: ProbeNoClaim},
		{name: "half a claim is nothing", setup: func() {
			hub.respond(http.StatusOK, clusterJSON(map[string]interface{}{"endpoint": "https://hub-b:6443"}))
		}, want: ProbeNoClaim},
		{name: "401", setup: func() {
			hub.respond(http.StatusUnauthorized, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`)
		}, want: ProbeUnauthorized, wantErr: "Cluster kubeslice-acme/worker-1"},
		{name: "401 without a Status body", setup: func() { hub.respond(http.StatusUnauthorized, `Unauthorized`) }, want: ProbeUnauthorized, wantErr: "HTTP 401 Unauthorized"},
		{name: "403", setup: func() {
			hub.respond(http.StatusForbidden, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"clusters is forbidden"}`)
		}, want: ProbeForbidden, wantErr: "forbidden"},
		{name: "404", setup: func() {
			hub.respond(http.StatusNotFound, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		}, want: ProbeNotFound},
		{name: "500 means no answer", setup: func() { hub.respond(http.StatusInternalServerError, `oops`) }, want: ProbeUnreachable, wantErr: "HTTP 500"},
		{name: "wrong types", setup: func() {
			hub.respond(http.StatusOK, clusterJSON(map[string]interface{}{"endpoint": 42, "activeIdentity": "hub-b"}))
		}, want: ProbeMalformed, wantErr: "endpoint: want a string"},
		{name: "bad caBundle", setup: func() {
			hub.respond(http.StatusOK, clusterJSON(map[string]interface{}{"endpoint": "https://hub-b", "activeIdentity": "hub-b", "caBundle": "%%%"}))
		}, want: ProbeMalformed, wantErr: "caBundle"},
		{name: "200 that is not JSON", setup: func() { hub.respond(http.StatusOK, `<html>login</html>`) }, want: ProbeMalformed},
		{name: "oversized body", setup: func() {
			hub.respond(http.StatusOK, `{"pad":"`+strings.Repeat("x", maxProbeResponseBytes)+`"}`)
		}, want: ProbeMalformed, wantErr: "size limit"},
	}
	p := NewProber(hub.connection(t, PrimaryName), testNamespace, testCluster, 5*time.Second)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			got := p.Probe(context.Background())
			if got.Kind != tt.want {
				t.Fatalf("Kind = %v (err %v), want %v", got.Kind, got.Err, tt.want)
			}
			if got.Hub != PrimaryName {
				t.Errorf("Hub = %q", got.Hub)
			}
			if tt.want.failed() != (got.Err != nil) {
				t.Errorf("Err = %v for kind %v", got.Err, got.Kind)
			}
			if got.Err != nil {
				msg := got.Err.Error()
				if !strings.Contains(msg, tt.wantErr) || !strings.Contains(msg, hub.Server.URL) {
					t.Errorf("error %q should contain %q and name the hub endpoint", msg, tt.wantErr)
				}
				if strings.Contains(msg, testToken) {
					t.Errorf("error leaks the token: %q", msg)
				}
			}
		})
	}
}

func TestProbeUsesThatHubsOwnCredential(t *testing.T) {
	hubA := newFakeHub(t, "token-a")
	hubB := newFakeHub(t, "token-b")
	hubB.publish("hub-b", hubB.Server.URL, "")
	connB := hubB.connection(t, SecondaryName)

	if got := NewProber(connB, testNamespace, testCluster, 5*time.Second).Probe(context.Background()); got.Kind != ProbeClaim {
		t.Fatalf("own credential: Kind = %v (%v), want claim", got.Kind, got.Err)
	}
	// The endpoint moved without its token (upstream's bug): hub B rejects it.
	crossed := connB
	crossed.TokenFile = hubA.connection(t, PrimaryName).TokenFile
	if got := NewProber(crossed, testNamespace, testCluster, 5*time.Second).Probe(context.Background()); got.Kind != ProbeUnauthorized {
		t.Errorf("crossed credential: Kind = %v, want unauthorized", got.Kind)
	}
}

// A hub that accepts the connection and never answers must not hold a probe
// past its timeout: neither before TLS completes nor after.
func TestProbeHungHubReturnsWithinTimeout(t *testing.T) {
	tlsHub := newFakeHub(t, testToken) // only for its serving certificate
	cert := tlsHub.Server.TLS.Certificates[0]
	caFile := writeFile(t, "ca.crt", string(certPEM(tlsHub.Server)))
	tokenFile := writeFile(t, "token", testToken)
	tests := []struct {
		name string
		tls  bool
	}{
		{name: "accepts TCP, never answers", tls: false},
		{name: "completes TLS, never answers", tls: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var endpoint string
			var accepted *atomic.Int64
			if tt.tls {
				endpoint, accepted = hungServer(t, &cert)
			} else {
				endpoint, accepted = hungServer(t, nil)
			}
			const timeout = 300 * time.Millisecond
			p := NewProber(Connection{Name: SecondaryName, Endpoint: endpoint, TokenFile: tokenFile, CAFile: caFile},
				testNamespace, testCluster, timeout)

			done := make(chan ProbeResult, 1)
			go func() { done <- p.Probe(context.Background()) }()
			// Generous for a loaded 2-core CI machine; without the bounds the
			// probe would wait for the OS TCP timeout (minutes).
			select {
			case got := <-done:
				if got.Kind != ProbeTimeout && got.Kind != ProbeUnreachable {
					t.Errorf("Kind = %v (%v), want timeout or unreachable", got.Kind, got.Err)
				}
				if got.Kind != ProbeTimeout {
					t.Logf("classified %v: %v", got.Kind, got.Err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("probe of a hung hub did not return within 5s (timeout 300ms)")
			}
			if accepted.Load() == 0 {
				t.Error("the hung server never saw a connection; the test proves nothing")
			}
		})
	}
}

func TestProbeRefusedIsUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "https://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	p := NewProber(Connection{Name: PrimaryName, Endpoint: endpoint,
		TokenFile: writeFile(t, "token", testToken), CAFile: writeFile(t, "ca.crt", string(certPEM(newFakeHub(t, "x").Server)))},
		testNamespace, testCluster, 5*time.Second)
	got := p.Probe(context.Background())
	if got.Kind != ProbeUnreachable {
		t.Errorf("Kind = %v (%v), want unreachable", got.Kind, got.Err)
	}
	if got.Err == nil || !strings.Contains(got.Err.Error(), "no HTTP answer") || !strings.Contains(got.Err.Error(), endpoint) {
		t.Errorf("Err = %v; want it to name the endpoint and say there was no answer", got.Err)
	}
}

func TestProbeUntrustedCertificateIsUnreachable(t *testing.T) {
	hub := newFakeHub(t, testToken)
	conn := hub.connection(t, PrimaryName)
	conn.CAFile = writeFile(t, "other-ca.crt", unrelatedCAPEM(t))
	if got := NewProber(conn, testNamespace, testCluster, 5*time.Second).Probe(context.Background()); got.Kind != ProbeUnreachable {
		t.Errorf("Kind = %v (%v), want unreachable", got.Kind, got.Err)
	}
	if hub.Requests.Load() != 0 {
		t.Error("a request reached a hub whose certificate is not trusted")
	}
}

func TestProbeParentContextBoundsTheRead(t *testing.T) {
	endpoint, _ := hungServer(t, nil)
	p := NewProber(Connection{Name: PrimaryName, Endpoint: endpoint,
		TokenFile: writeFile(t, "token", testToken), CAFile: writeFile(t, "ca.crt", string(certPEM(newFakeHub(t, "x").Server)))},
		testNamespace, testCluster, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan ProbeResult, 1)
	go func() { done <- p.Probe(ctx) }()
	select {
	case got := <-done:
		if !got.Kind.failed() {
			t.Errorf("Kind = %v", got.Kind)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("probe ignored its context")
	}
}

func TestProberBuildsItsClientOnce(t *testing.T) {
	hub := newFakeHub(t, testToken)
	hub.publishNothing()
	p := NewProber(hub.connection(t, PrimaryName), testNamespace, testCluster, 5*time.Second)
	builds := countBuilds(p)
	for i := 0; i < 3; i++ {
		if got := p.Probe(context.Background()); got.Kind != ProbeNoClaim {
			t.Fatalf("probe %d: %v (%v)", i, got.Kind, got.Err)
		}
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("client built %d times for 3 probes, want 1", n)
	}
	if n := hub.Requests.Load(); n != 3 {
		t.Errorf("hub saw %d requests, want 3", n)
	}
}

// A Standby credential mounted after the worker started (an optional Secret
// volume filled in later) is picked up without a restart.
func TestProberRetriesUntilTheCredentialIsMounted(t *testing.T) {
	hub := newFakeHub(t, testToken)
	conn := hub.connection(t, SecondaryName)
	realToken := conn.TokenFile
	conn.TokenFile = realToken + ".not-yet"
	p := NewProber(conn, testNamespace, testCluster, 5*time.Second)
	builds := countBuilds(p)

	got := p.Probe(context.Background())
	if got.Kind != ProbeCredentialUnavailable {
		t.Fatalf("Kind = %v (%v), want credential_unavailable", got.Kind, got.Err)
	}
	if !strings.Contains(got.Err.Error(), conn.TokenFile) {
		t.Errorf("error %q does not name the token file", got.Err)
	}
	if hub.Requests.Load() != 0 {
		t.Error("a request was sent without a credential")
	}
	if err := os.Rename(realToken, conn.TokenFile); err != nil {
		t.Fatal(err)
	}
	if got := p.Probe(context.Background()); got.Kind != ProbeNoClaim {
		t.Fatalf("after mounting: Kind = %v (%v)", got.Kind, got.Err)
	}
	p.Probe(context.Background())
	if n := builds.Load(); n != 2 {
		t.Errorf("client build attempts = %d, want 2 (one failed, one kept)", n)
	}
}

func TestProbeRESTConfigKeepsTheConnectionAndBoundsTheRead(t *testing.T) {
	conn := Connection{Name: PrimaryName, Endpoint: "https://hub-a:6443", TokenFile: "/a/token", CAFile: "/a/ca.crt"}
	cfg := probeRESTConfig(conn, 3*time.Second)
	if cfg.Host != conn.Endpoint || cfg.BearerTokenFile != conn.TokenFile || cfg.CAFile != conn.CAFile {
		t.Errorf("probe config %+v does not use the connection %+v", cfg, conn)
	}
	if cfg.BearerToken != "" || len(cfg.CAData) != 0 {
		t.Error("probe config copied the credential in instead of reading the files")
	}
	if cfg.Timeout != 3*time.Second {
		t.Errorf("Timeout = %v, want the resolve timeout", cfg.Timeout)
	}
	if conn.RESTConfig().Timeout != 0 {
		t.Error("probe bounds leaked into the connection's own RESTConfig")
	}
}

func countBuilds(p *Prober) *atomic.Int64 {
	var n atomic.Int64
	build := p.newClient
	p.newClient = func(c *rest.Config) (*rest.RESTClient, error) {
		n.Add(1)
		return build(c)
	}
	return &n
}

// unrelatedCAPEM is a freshly made self-signed CA that did not sign the
// hub's certificate.
func unrelatedCAPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "unrelated-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
