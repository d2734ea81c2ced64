package testpki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
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
