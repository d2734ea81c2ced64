package karmadacp

import (
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/holdfast-dist/holdfast/internal/harness/testpki"
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
// kube-apiserver's own (internal/harness/controlplane makes that): a CA for the
// serving certificates of the aggregated API server and the webhook
// (upstream's deploy script signs both with its root CA), and the
// front-proxy CA and client certificate kube-apiserver authenticates to
// aggregated API servers with (--proxy-client-cert-file, checked against
// --requestheader-client-ca-file). Generated per run, ECDSA P-256.
type pki struct {
	dir    string
	caCert []byte // PEM, the caBundle of the APIService and webhooks
	// ca signs the serving certificates of optional components on demand
	// (servingCert).
	ca *testpki.Authority
	// signerCA and issuerCA are the client CAs of Options.CSRSigning
	// (csrsigning.go); nil without it.
	signerCA, issuerCA *testpki.Authority
}

// newPKI generates every certificate and writes it under dir.
func newPKI(dir string, now time.Time) (*pki, error) {
	ca, err := testpki.NewAuthority(caCommonName, now)
	if err != nil {
		return nil, err
	}
	frontProxy, err := testpki.NewAuthority(frontProxyCACommonName, now)
	if err != nil {
		return nil, err
	}
	p := &pki{dir: dir, caCert: ca.CertPEM, ca: ca}
	files := []pemFile{
		{p.caFile(), ca.CertPEM, 0o644},
		{p.frontProxyCAFile(), frontProxy.CertPEM, 0o644},
	}
	for _, leaf := range []struct {
		issuer    *testpki.Authority
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
		cert, key, err := leaf.issuer.Issue(testpki.Leaf{CommonName: leaf.cn, Usage: leaf.usage, DNSNames: leaf.dns, IPs: leaf.ips}, now)
		if err != nil {
			return nil, err
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

// servingCert issues a serving certificate from the CA for Service
// namespace/service (the name the aggregator checks) and 127.0.0.1, and
// writes it as <service>.crt and .key.
func (p *pki) servingCert(namespace, service string, now time.Time) (certFile, keyFile string, err error) {
	dns := service + "." + namespace + ".svc"
	cert, key, err := p.ca.Issue(testpki.Leaf{CommonName: service, Usage: x509.ExtKeyUsageServerAuth, DNSNames: []string{dns, loopbackName}, IPs: []net.IP{net.ParseIP(loopback)}}, now)
	if err != nil {
		return "", "", fmt.Errorf("certificate %s: %w", service, err)
	}
	certFile, keyFile = filepath.Join(p.dir, service+".crt"), filepath.Join(p.dir, service+".key")
	if err := os.WriteFile(certFile, cert, 0o644); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
}
