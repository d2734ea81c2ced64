package karmadacp

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"testing"
	"time"
)

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s: no PEM block", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pool(t *testing.T, path string) *x509.CertPool {
	t.Helper()
	p := x509.NewCertPool()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !p.AppendCertsFromPEM(data) {
		t.Fatalf("%s: no certificate", path)
	}
	return p
}

// TestPKIServesWhatTheAggregatorAndWebhooksCheck: the aggregator verifies
// the aggregated API server for <service>.<namespace>.svc, kube-apiserver
// calls webhooks at 127.0.0.1, and the aggregated API server checks the
// front-proxy client certificate against the request-header CA for CN
// front-proxy-client.
func TestPKIServesWhatTheAggregatorAndWebhooksCheck(t *testing.T) {
	now := time.Now()
	p, err := newPKI(t.TempDir(), now)
	if err != nil {
		t.Fatal(err)
	}
	ca := pool(t, p.caFile())
	for _, tc := range []struct {
		cert string
		name string
	}{
		{p.aggregatedCertFile(), "karmada-aggregated-apiserver.karmada-system.svc"},
		{p.aggregatedCertFile(), "127.0.0.1"},
		{p.webhookCertFile(), "127.0.0.1"},
		{p.webhookCertFile(), "karmada-webhook.karmada-system.svc"},
		{p.searchCertFile(), "karmada-search.karmada-system.svc"},
		{p.searchCertFile(), "127.0.0.1"},
	} {
		c := readCert(t, tc.cert)
		if _, err := c.Verify(x509.VerifyOptions{DNSName: tc.name, Roots: ca, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("%s for %s: %v", tc.cert, tc.name, err)
		}
	}
	if _, err := readCert(t, p.aggregatedCertFile()).Verify(x509.VerifyOptions{DNSName: "other.karmada-system.svc", Roots: ca}); err == nil {
		t.Error("the aggregated API server's certificate is valid for any name")
	}

	client := readCert(t, p.frontProxyCertFile())
	if client.Subject.CommonName != frontProxyClientName {
		t.Errorf("front-proxy client CN %q, want %q (--requestheader-allowed-names)", client.Subject.CommonName, frontProxyClientName)
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: pool(t, p.frontProxyCAFile()), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("front-proxy client certificate: %v", err)
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: ca, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("the front-proxy client certificate verifies against the serving CA: the two CAs must be distinct")
	}
	if !client.NotAfter.Before(now.Add(25 * time.Hour)) {
		t.Errorf("front-proxy client certificate valid until %s, want about a day", client.NotAfter)
	}

	for _, pair := range [][2]string{{p.aggregatedCertFile(), p.aggregatedKeyFile()}, {p.webhookCertFile(), p.webhookKeyFile()}, {p.searchCertFile(), p.searchKeyFile()}, {p.frontProxyCertFile(), p.frontProxyKeyFile()}} {
		if _, err := tls.LoadX509KeyPair(pair[0], pair[1]); err != nil {
			t.Errorf("%s and %s are not a pair: %v", pair[0], pair[1], err)
		}
		fi, err := os.Stat(pair[1])
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", pair[1], fi.Mode().Perm())
		}
	}
	if got := readCert(t, p.webhookCertFile()).IPAddresses; len(got) != 1 || !got[0].Equal(net.ParseIP("127.0.0.1")) {
		t.Errorf("webhook certificate IPs %v, want 127.0.0.1 only", got)
	}
}
