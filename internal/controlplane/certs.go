package controlplane

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
	"os"
	"path/filepath"
	"time"
)

// certValidity is how long the per-run certificates are valid: a suite run
// takes well under an hour, and a short life makes a leaked test directory
// worthless soon.
const certValidity = 24 * time.Hour

// certBackdate starts validity a little in the past, because NotBefore is
// encoded in whole seconds and a client checking within the same second
// must not see a certificate that is "not yet valid".
const certBackdate = time.Minute

// pki is the key material of one cluster, all generated per run with ECDSA
// P-256 (small, fast to generate, accepted by kube-apiserver for serving and
// for ServiceAccount token signing as ES256).
type pki struct {
	caCert, servingCert, servingKey []byte // PEM
	saKey, saPub                    []byte // PEM: the token signing key pair
}

// File names under the cluster's cert folder.
const (
	caCertFile      = "ca.crt"
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	saKeyFile       = "sa.key"
	saPubFile       = "sa.pub"
)

// newPKI makes a CA named after the cluster, a serving certificate it signs
// for 127.0.0.1 and localhost, and a ServiceAccount signing key pair.
func newPKI(cluster string, now time.Time) (*pki, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "holdfast-e2e-ca-" + cluster},
		NotBefore:             now.Add(-certBackdate),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := sign(caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	servingTmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver-" + cluster},
		NotBefore:   now.Add(-certBackdate),
		NotAfter:    now.Add(certValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP(loopback)},
		DNSNames:    []string{"localhost"},
	}
	servingDER, err := sign(servingTmpl, ca, &servingKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	p := &pki{
		caCert:      pemBlock("CERTIFICATE", caDER),
		servingCert: pemBlock("CERTIFICATE", servingDER),
	}
	if p.servingKey, err = ecKeyPEM(servingKey); err != nil {
		return nil, err
	}
	if p.saKey, err = ecKeyPEM(saKey); err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	p.saPub = pemBlock("PUBLIC KEY", saPubDER)
	return p, nil
}

func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	return x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
}

func ecKeyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pemBlock("EC PRIVATE KEY", der), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// write puts the files in dir; private keys are readable by the owner only.
func (p *pki) write(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{caCertFile, p.caCert, 0o644},
		{servingCertFile, p.servingCert, 0o644},
		{servingKeyFile, p.servingKey, 0o600},
		{saKeyFile, p.saKey, 0o600},
		{saPubFile, p.saPub, 0o644},
	} {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}
