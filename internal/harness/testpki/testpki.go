package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
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
	key  *ecdsa.PrivateKey
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

func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) ([]byte, error) {
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
