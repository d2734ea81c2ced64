package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/keyutil"

	"github.com/holdfast-dist/holdfast/internal/harness/testpki"
)

// pki is the key material of one cluster, all generated per run with ECDSA
// P-256 (small, fast to generate, accepted by kube-apiserver for serving and
// for ServiceAccount token signing as ES256).
type pki struct {
	caCert, servingCert, servingKey []byte // PEM
	saKey, saPub                    []byte // PEM: the token signing key pair
	// next are further CAs with their serving certificates, made up front
	// so that the admin clients trust them from the start (see
	// Cluster.RestartWithNextCA): kube-apiserver serves each only after
	// its switch, in order.
	next []servingSet
}

// servingSet is a CA and the serving certificate and key it signed (PEM).
type servingSet struct{ caCert, servingCert, servingKey []byte }

// File names under the cluster's cert folder.
const (
	caCertFile      = "ca.crt"
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	saKeyFile       = "sa.key"
	saPubFile       = "sa.pub"
)

// newPKI makes a CA named after the cluster, a serving certificate it signs
// for 127.0.0.1, localhost and extraIPs (nil ones skipped), rotations
// further CAs each with such a certificate, and a ServiceAccount signing
// key pair.
func newPKI(cluster string, now time.Time, rotations int, extraIPs ...net.IP) (*pki, error) {
	ca, err := testpki.NewAuthority("holdfast-e2e-ca-"+cluster, now)
	if err != nil {
		return nil, err
	}
	p := &pki{caCert: ca.CertPEM}
	ips := []net.IP{net.ParseIP(loopback)}
	for _, ip := range extraIPs {
		if ip != nil && !ip.Equal(ips[0]) {
			ips = append(ips, ip)
		}
	}
	if p.servingCert, p.servingKey, err = servingPair(ca, cluster, ips, now); err != nil {
		return nil, err
	}
	for i := range rotations {
		name := "holdfast-e2e-next-ca-" + cluster
		if i > 0 {
			name = fmt.Sprintf("%s-%d", name, i+1)
		}
		next, err := testpki.NewAuthority(name, now)
		if err != nil {
			return nil, err
		}
		set := servingSet{caCert: next.CertPEM}
		if set.servingCert, set.servingKey, err = servingPair(next, cluster, ips, now); err != nil {
			return nil, err
		}
		p.next = append(p.next, set)
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if p.saKey, err = keyutil.MarshalPrivateKeyToPEM(saKey); err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	p.saPub = pem.EncodeToMemory(&pem.Block{Type: keyutil.PublicKeyBlockType, Bytes: saPubDER})
	return p, nil
}

// servingPair is kube-apiserver's serving certificate and key, signed by ca,
// for localhost and ips (127.0.0.1 and the cluster's extra addresses).
func servingPair(ca *testpki.Authority, cluster string, ips []net.IP, now time.Time) (cert, key []byte, err error) {
	cert, key, err = ca.Issue(testpki.Leaf{
		CommonName: "kube-apiserver-" + cluster,
		Usage:      x509.ExtKeyUsageServerAuth,
		IPs:        ips,
		DNSNames:   []string{"localhost"},
	}, now)
	if err != nil {
		return nil, nil, fmt.Errorf("serving certificate: %w", err)
	}
	return cert, key, nil
}

// write puts the files in dir; private keys are readable by the owner only.
// The next sets stay in memory until their switch (Cluster.RestartWithNextCA
// writes them over the first).
func (p *pki) write(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := p.servingSet().write(dir); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, saKeyFile), p.saKey, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, saPubFile), p.saPub, 0o644)
}

// servingSet is the first CA and its serving certificate.
func (p *pki) servingSet() servingSet {
	return servingSet{caCert: p.caCert, servingCert: p.servingCert, servingKey: p.servingKey}
}

// write puts the set's files in dir, over what is there; the key is
// readable by the owner only.
func (s servingSet) write(dir string) error {
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{caCertFile, s.caCert, 0o644},
		{servingCertFile, s.servingCert, 0o644},
		{servingKeyFile, s.servingKey, 0o600},
	} {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}
