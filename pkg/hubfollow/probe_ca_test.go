package hubfollow

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// renewableCA issues the hub's serving certificates; each call of
// newRenewableCA stands for one CA generation.
type renewableCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newRenewableCA(t *testing.T) *renewableCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "hub-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &renewableCA{cert: cert, key: key}
}

func (ca *renewableCA) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

func (ca *renewableCA) serving(t *testing.T) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "hub"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestProbeFollowsARenewedHubCA: the hub restarts with a certificate from a
// renewed CA and its CA file is replaced; the prober, built once and kept,
// reads the hub again without being rebuilt, as the worker's hub clients do.
func TestProbeFollowsARenewedHubCA(t *testing.T) {
	hub := newFakeHub(t, "hub-token")
	hub.publishNothing()
	oldCA, newCA := newRenewableCA(t), newRenewableCA(t)
	var cert atomic.Pointer[tls.Certificate]
	cert.Store(oldCA.serving(t))
	srv := httptest.NewUnstartedServer(hub.Server.Config.Handler)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return &tls.Config{Certificates: []tls.Certificate{*cert.Load()}}, nil
	}}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	conn := hub.connection(t, PrimaryName)
	conn.Endpoint = srv.URL
	if err := os.WriteFile(conn.CAFile, oldCA.pem(), 0o600); err != nil {
		t.Fatal(err)
	}
	p := NewProber(conn, "kubeslice-acme", "worker-1", 5*time.Second)
	builds := countBuilds(p)
	if got := p.Probe(context.Background()); got.Kind != ProbeNoClaim {
		t.Fatalf("with the first CA: %v (%v)", got.Kind, got.Err)
	}

	cert.Store(newCA.serving(t))
	srv.CloseClientConnections()
	tmp := filepath.Join(filepath.Dir(conn.CAFile), "ca.tmp")
	if err := os.WriteFile(tmp, newCA.pem(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, conn.CAFile); err != nil {
		t.Fatal(err)
	}
	if got := p.Probe(context.Background()); got.Kind != ProbeNoClaim {
		t.Fatalf("after the hub's CA was renewed and its file replaced: %v (%v)", got.Kind, got.Err)
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("client builds = %d, want the one kept", n)
	}
}
