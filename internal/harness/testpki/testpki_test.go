package testpki

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestIssuedLeafVerifiesAgainstItsAuthorityOnly(t *testing.T) {
	now := time.Now()
	ca, err := NewAuthority("test-ca", now)
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewAuthority("other-ca", now)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue(Leaf{CommonName: "server", Usage: x509.ExtKeyUsageServerAuth, DNSNames: []string{"svc.ns.svc"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatalf("certificate and key do not pair: %v", err)
	}
	block, _ := pem.Decode(certPEM)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	verify := func(a *Authority, name string, at time.Time, usage x509.ExtKeyUsage) error {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(a.CertPEM)
		_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	for _, name := range []string{"svc.ns.svc", "127.0.0.1"} {
		if err := verify(ca, name, now, x509.ExtKeyUsageServerAuth); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, err := range map[string]error{
		"another CA":          verify(other, "svc.ns.svc", now, x509.ExtKeyUsageServerAuth),
		"another name":        verify(ca, "evil.example", now, x509.ExtKeyUsageServerAuth),
		"as a client":         verify(ca, "svc.ns.svc", now, x509.ExtKeyUsageClientAuth),
		"after its validity":  verify(ca, "svc.ns.svc", now.Add(Validity+time.Minute), x509.ExtKeyUsageServerAuth),
		"in the same second":  nil,
		"before the backdate": verify(ca, "svc.ns.svc", now.Add(-2*Backdate), x509.ExtKeyUsageServerAuth),
	} {
		if name == "in the same second" {
			if err := verify(ca, "svc.ns.svc", now.Truncate(time.Second), x509.ExtKeyUsageServerAuth); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: verified, want refused", name)
		}
	}
}

// TestClientLeafCarriesGroupsAndValidity: a client certificate with its
// groups (O) and the validity asked for, and a CA key another signer can
// load.
func TestClientLeafCarriesGroupsAndValidity(t *testing.T) {
	now := time.Now()
	ca, err := NewAuthority("client-ca", now)
	if err != nil {
		t.Fatal(err)
	}
	from, to := now.Add(-30*time.Minute).Truncate(time.Second), now.Add(31*time.Minute).Truncate(time.Second)
	certPEM, _, err := ca.Issue(Leaf{CommonName: "system:karmada:agent:member1", Organization: []string{"system:karmada:agents"}, Usage: x509.ExtKeyUsageClientAuth, NotBefore: from, NotAfter: to}, now)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if got := leaf.Subject.Organization; len(got) != 1 || got[0] != "system:karmada:agents" {
		t.Errorf("O = %v, want [system:karmada:agents]", got)
	}
	if !leaf.NotBefore.Equal(from) || !leaf.NotAfter.Equal(to) {
		t.Errorf("validity %s to %s, want %s to %s", leaf.NotBefore, leaf.NotAfter, from, to)
	}
	keyPEM, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(ca.CertPEM, keyPEM); err != nil {
		t.Errorf("the CA's KeyPEM does not pair with its CertPEM: %v", err)
	}
}

// TestLoadAuthorityIssuesFromAnRSACA: a CA made elsewhere (a chart's cfssl
// CA is RSA) issues leaves that verify against it.
func TestLoadAuthorityIssuesFromAnRSACA(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rsa-ca"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	ca, err := LoadAuthority(CertPEM(der), keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _, err := ca.Issue(Leaf{CommonName: "agent", Usage: x509.ExtKeyUsageClientAuth}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(CertPEM(der))
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("a leaf of the loaded RSA CA does not verify against it: %v", err)
	}
	if _, err := LoadAuthority(CertPEM(der), []byte("not a key")); err == nil || !strings.Contains(err.Error(), "CA key") {
		t.Errorf("a bad key: %v, want an error naming the CA key", err)
	}
}

// TestRevocableClients: both certificates verify against the bundle until
// WithdrawFirst, then only the next one does.
func TestRevocableClients(t *testing.T) {
	c, err := NewRevocableClients(filepath.Join(t.TempDir(), "ca"), "someone", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	verifies := func(kp KeyPair) bool {
		bundle, err := os.ReadFile(c.Bundle)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(bundle)
		block, _ := pem.Decode(kp.Cert)
		leaf, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if leaf.Subject.CommonName != "someone" {
			t.Errorf("CN %q", leaf.Subject.CommonName)
		}
		_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		return err == nil
	}
	if !verifies(c.First) || !verifies(c.Next) {
		t.Fatal("before WithdrawFirst, both certificates must verify against the bundle")
	}
	if err := c.WithdrawFirst(); err != nil {
		t.Fatal(err)
	}
	if verifies(c.First) {
		t.Error("the first certificate still verifies after WithdrawFirst")
	}
	if !verifies(c.Next) {
		t.Error("the next certificate no longer verifies after WithdrawFirst")
	}
}
