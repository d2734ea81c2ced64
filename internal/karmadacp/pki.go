package karmadacp

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

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// certValidity and certBackdate: as internal/controlplane's, a run takes
// well under a day, and NotBefore is encoded in whole seconds.
const (
	certValidity = 24 * time.Hour
	certBackdate = time.Minute
)

// Names the aggregation layer and the components are reached by. The
// aggregator dials an APIService's Service and checks the serving
// certificate for <service>.<namespace>.svc, so the aggregated API server's
// certificate must carry that name even though the Service here points at
// 127.0.0.1 (see aggregatedAPIService).
const (
	SystemNamespace        = "karmada-system"
	aggregatedServiceName  = "karmada-aggregated-apiserver"
	webhookServiceName     = "karmada-webhook"
	frontProxyClientName   = "front-proxy-client"
	aggregatedServiceDNS   = aggregatedServiceName + "." + SystemNamespace + ".svc"
	webhookServiceDNS      = webhookServiceName + "." + SystemNamespace + ".svc"
	searchServiceName      = "karmada-search"
	searchServiceDNS       = searchServiceName + "." + SystemNamespace + ".svc"
	loopback               = "127.0.0.1"
	loopbackName           = "localhost"
	caCommonName           = "holdfast-e2e-karmada-ca"
	frontProxyCACommonName = "holdfast-e2e-karmada-front-proxy-ca"
)

// File names under the control plane's pki folder.
const (
	webhookCertDirName     = "webhook"
	webhookCertName        = "tls.crt" // karmada-webhook's --tls-cert-file-name default
	webhookKeyName         = "tls.key" // and --tls-private-key-file-name
	caFileName             = "ca.crt"
	frontProxyCAFileName   = "front-proxy-ca.crt"
	frontProxyCertFileName = "front-proxy-client.crt"
	frontProxyKeyFileName  = "front-proxy-client.key"
	aggregatedCertFileName = "karmada-aggregated-apiserver.crt"
	aggregatedKeyFileName  = "karmada-aggregated-apiserver.key"
	searchCertFileName     = "karmada-search.crt"
	searchKeyFileName      = "karmada-search.key"
)

// pki is the key material a Karmada control plane adds to its
// kube-apiserver's own (internal/controlplane makes that): a CA for the
// serving certificates of the aggregated API server and the webhook
// (upstream's deploy script signs both with its root CA), and the
// front-proxy CA and client certificate kube-apiserver authenticates to
// aggregated API servers with (--proxy-client-cert-file, checked against
// --requestheader-client-ca-file). Generated per run, ECDSA P-256.
type pki struct {
	dir    string
	caCert []byte // PEM, the caBundle of the APIService and webhooks
}

// newPKI generates every certificate and writes it under dir.
func newPKI(dir string, now time.Time) (*pki, error) {
	ca, err := newCA(caCommonName)
	if err != nil {
		return nil, err
	}
	frontProxy, err := newCA(frontProxyCACommonName)
	if err != nil {
		return nil, err
	}
	p := &pki{dir: dir, caCert: ca.certPEM}
	files := []pemFile{
		{p.caFile(), ca.certPEM, 0o644},
		{p.frontProxyCAFile(), frontProxy.certPEM, 0o644},
	}
	for _, leaf := range []struct {
		issuer    *authority
		cn        string
		usage     x509.ExtKeyUsage
		dns       []string
		ips       []net.IP
		cert, key string
	}{
		// kube-apiserver checks the client certificate's CN against
		// --requestheader-allowed-names.
		{frontProxy, frontProxyClientName, x509.ExtKeyUsageClientAuth, nil, nil, p.frontProxyCertFile(), p.frontProxyKeyFile()},
		{ca, aggregatedServiceName, x509.ExtKeyUsageServerAuth, []string{aggregatedServiceDNS, loopbackName}, []net.IP{net.ParseIP(loopback)}, p.aggregatedCertFile(), p.aggregatedKeyFile()},
		// Webhooks are called by URL (see webhookURL), so 127.0.0.1 is the
		// name that matters; the Service name is there as upstream has it.
		{ca, webhookServiceName, x509.ExtKeyUsageServerAuth, []string{webhookServiceDNS, loopbackName}, []net.IP{net.ParseIP(loopback)}, p.webhookCertFile(), p.webhookKeyFile()},
		// karmada-search is reached as karmada-aggregated-apiserver is:
		// through its APIService's Service name (see apiService).
		{ca, searchServiceName, x509.ExtKeyUsageServerAuth, []string{searchServiceDNS, loopbackName}, []net.IP{net.ParseIP(loopback)}, p.searchCertFile(), p.searchKeyFile()},
	} {
		cert, key, err := leaf.issuer.issue(leaf.cn, leaf.usage, leaf.dns, leaf.ips, now)
		if err != nil {
			return nil, fmt.Errorf("certificate %s: %w", leaf.cn, err)
		}
		// Private keys are readable by the owner only.
		files = append(files, pemFile{leaf.cert, cert, 0o644}, pemFile{leaf.key, key, 0o600})
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *pki) caFile() string             { return filepath.Join(p.dir, caFileName) }
func (p *pki) frontProxyCAFile() string   { return filepath.Join(p.dir, frontProxyCAFileName) }
func (p *pki) frontProxyCertFile() string { return filepath.Join(p.dir, frontProxyCertFileName) }
func (p *pki) frontProxyKeyFile() string  { return filepath.Join(p.dir, frontProxyKeyFileName) }
func (p *pki) aggregatedCertFile() string { return filepath.Join(p.dir, aggregatedCertFileName) }
func (p *pki) aggregatedKeyFile() string  { return filepath.Join(p.dir, aggregatedKeyFileName) }
func (p *pki) searchCertFile() string     { return filepath.Join(p.dir, searchCertFileName) }
func (p *pki) searchKeyFile() string      { return filepath.Join(p.dir, searchKeyFileName) }
func (p *pki) webhookCertDir() string     { return filepath.Join(p.dir, webhookCertDirName) }
func (p *pki) webhookCertFile() string    { return filepath.Join(p.webhookCertDir(), webhookCertName) }
func (p *pki) webhookKeyFile() string     { return filepath.Join(p.webhookCertDir(), webhookKeyName) }

type pemFile struct {
	path string
	data []byte
	mode os.FileMode
}

// authority is a CA that signs leaf certificates.
type authority struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

func newCA(cn string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	// client-go's helper makes a self-signed CA the way kubeadm does (its
	// own validity: ten years from now; the leaves it signs live a day).
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: cn}, key)
	if err != nil {
		return nil, fmt.Errorf("CA %s: %w", cn, err)
	}
	return &authority{cert: cert, key: key, certPEM: certPEM(cert.Raw)}, nil
}

// issue signs a leaf certificate; client-go has no helper for a
// CA-signed leaf (only self-signed ones), so the template is written here.
func (a *authority) issue(cn string, usage x509.ExtKeyUsage, dns []string, ips []net.IP, now time.Time) (certPEMData, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-certBackdate),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return certPEM(der), keyPEM, nil
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: der})
}
