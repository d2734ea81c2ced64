package testpki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Validity is how long a certificate is valid: a suite run takes well
// under an hour.
const Validity = 24 * time.Hour

// Backdate starts validity a little in the past: NotBefore is encoded in
// whole seconds.
const Backdate = time.Minute

// Authority is a CA that signs leaf certificates.
type Authority struct {
	cert *x509.Certificate
	key  crypto.Signer
	// CertPEM is the CA certificate, for CA files and caBundles.
	CertPEM []byte
}

// NewAuthority makes a self-signed CA named cn, valid from now.
func NewAuthority(cn string, now time.Time) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-Backdate),
		NotAfter:              now.Add(Validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := sign(tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("CA %s: %w", cn, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Authority{cert: cert, key: key, CertPEM: CertPEM(der)}, nil
}

// LoadAuthority is the CA of certPEM and keyPEM (PEM, any key type
// keyutil parses: a chart's RSA CA too), to issue leaves from it.
func LoadAuthority(certPEM, keyPEM []byte) (*Authority, error) {
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("CA key: a %T cannot sign", key)
	}
	return &Authority{cert: certs[0], key: signer, CertPEM: certPEM}, nil
}

// KeyPEM is the CA's private key, PEM-encoded, for a signer that is not
// this process (kube-controller-manager's --cluster-signing-*-key-file).
func (a *Authority) KeyPEM() ([]byte, error) {
	return keyutil.MarshalPrivateKeyToPEM(a.key)
}

// Leaf describes a certificate to issue.
type Leaf struct {
	CommonName string
	// Usage is ServerAuth for a serving certificate, ClientAuth for a
	// client's (the front proxy's).
	Usage    x509.ExtKeyUsage
	DNSNames []string
	IPs      []net.IP
	// Organization is the subject's O (a client certificate's groups).
	Organization []string
	// NotBefore and NotAfter bound the validity when set; by default it
	// is Backdate before now to Validity after.
	NotBefore, NotAfter time.Time
}

// Issue signs a leaf certificate valid from now, with a new key; it
// returns both PEM-encoded.
func (a *Authority) Issue(l Leaf, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	notBefore, notAfter := now.Add(-Backdate), now.Add(Validity)
	if !l.NotBefore.IsZero() {
		notBefore = l.NotBefore
	}
	if !l.NotAfter.IsZero() {
		notAfter = l.NotAfter
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: l.CommonName, Organization: l.Organization},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{l.Usage},
		DNSNames:    l.DNSNames,
		IPAddresses: l.IPs,
	}
	der, err := sign(tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate %s: %w", l.CommonName, err)
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return CertPEM(der), keyPEM, nil
}

func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer crypto.Signer) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	return x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
}

// CertPEM encodes a DER certificate.
func CertPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: der})
}

// KeyPair is a PEM certificate and its private key.
type KeyPair struct{ Cert, Key []byte }

// RevocableClients are two client CAs an API server trusts through one
// --client-ca-file bundle, and a client certificate of each for the same
// user: First is what a client starts with, Next what a rotation gives it.
// WithdrawFirst takes the first CA out of the bundle, which kube-apiserver
// reloads on change: the way a client certificate is refused before it
// expires, Kubernetes having no revocation list.
type RevocableClients struct {
	// Bundle is the file to pass as --client-ca-file.
	Bundle      string
	First, Next KeyPair
	nextCA      []byte
}

// NewRevocableClients makes both CAs and certificates for user (CN) and
// writes Bundle under dir.
func NewRevocableClients(dir, user string, now time.Time) (*RevocableClients, error) {
	c := &RevocableClients{Bundle: filepath.Join(dir, "client-ca.crt")}
	var bundle []byte
	for i, out := range []*KeyPair{&c.First, &c.Next} {
		ca, err := NewAuthority(fmt.Sprintf("holdfast-test-client-ca-%d", i+1), now)
		if err != nil {
			return nil, err
		}
		if out.Cert, out.Key, err = ca.Issue(Leaf{CommonName: user, Usage: x509.ExtKeyUsageClientAuth}, now); err != nil {
			return nil, err
		}
		bundle = append(bundle, ca.CertPEM...)
		c.nextCA = ca.CertPEM
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return c, replaceFile(c.Bundle, bundle)
}

// WithdrawFirst leaves only the next CA in Bundle.
func (c *RevocableClients) WithdrawFirst() error { return replaceFile(c.Bundle, c.nextCA) }

// replaceFile renames a complete file over path, so that a watcher
// (kube-apiserver's of its CA files) never reads half of it.
func replaceFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
