package main

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The chart's command line, from templates/pre-install-job.yaml.
func chartReq(dir string) []string {
	return []string{"req", "-x509", "-sha256", "-new", "-nodes", "-days", "3650", "-newkey", "rsa:2048",
		"-keyout", filepath.Join(dir, "server-ca.key"), "-out", filepath.Join(dir, "server-ca.crt"),
		"-subj", "/C=xx/ST=x/L=x/O=x/OU=x/CN=ca/emailAddress=x/"}
}

func TestOpensslReqMakesASelfSignedCA(t *testing.T) {
	dir := t.TempDir()
	if err := openssl(chartReq(dir)); err != nil {
		t.Fatal(err)
	}
	certPEM, _ := os.ReadFile(filepath.Join(dir, "server-ca.crt"))
	keyPEM, _ := os.ReadFile(filepath.Join(dir, "server-ca.key"))
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || cb.Type != "CERTIFICATE" || kb == nil || kb.Type != "PRIVATE KEY" {
		t.Fatalf("PEM blocks %v / %v, want CERTIFICATE and PRIVATE KEY (PKCS#8, as OpenSSL 3 writes)", cb, kb)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 || cert.Subject.CommonName != "ca" || cert.Subject.Country[0] != "xx" {
		t.Errorf("certificate CA=%v usage=%v subject %s", cert.IsCA, cert.KeyUsage, cert.Subject)
	}
	if err := cert.CheckSignatureFrom(cert); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
	if !key.(*rsa.PrivateKey).PublicKey.Equal(cert.PublicKey) || key.(*rsa.PrivateKey).N.BitLen() != 2048 {
		t.Error("key does not match the certificate or is not rsa:2048")
	}
	if days := cert.NotAfter.Sub(time.Now()).Hours() / 24; days < 3649 || days > 3651 {
		t.Errorf("valid for %.0f days, want 3650", days)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "server-ca.key")); fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestOpensslRefusesWhatItDoesNotProvide(t *testing.T) {
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"another command": {"x509", "-in", "a.crt"},
		"unknown option":  append(chartReq(dir), "-addext", "subjectAltName=DNS:x"),
		"without -nodes":  slicesDelete(chartReq(dir), "-nodes"),
		"ec key":          replace(chartReq(dir), "rsa:2048", "ec:prime256v1"),
		"bad subject":     replace(chartReq(dir), "/C=xx/ST=x/L=x/O=x/OU=x/CN=ca/emailAddress=x/", "/CN=ca/serialNumber=1"),
	} {
		if err := openssl(args); err == nil {
			t.Errorf("%s: openssl %v succeeded, want a refusal", name, args)
		}
	}
}

func slicesDelete(args []string, drop string) []string {
	var out []string
	for _, a := range args {
		if a != drop {
			out = append(out, a)
		}
	}
	return out
}

func replace(args []string, old, new string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == old {
			out[i] = new
		}
	}
	return out
}

func TestCurlExitsAsTheChartScriptExpects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open := ln.Addr().String()
	// A port nothing listens on: the listener's, once closed.
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln2.Addr().String()
	ln2.Close()
	defer ln.Close()

	// karmada-apiserver's init container: `curl --connect-timeout 2 ${ETCD_ENDPOINT}`
	// goes on when curl exits 0 (or 52) and retries on anything else.
	if code, err := curl([]string{"--connect-timeout", "2", open}); code != 0 || err != nil {
		t.Errorf("curl to a listening %s: exit %d, %v; want 0", open, code, err)
	}
	code, err := curl([]string{"--connect-timeout", "2", closed})
	if code != curlConnectFailed || err == nil || !strings.Contains(err.Error(), "Failed to connect") {
		t.Errorf("curl to closed %s: exit %d, %v; want 7 and curl's message", closed, code, err)
	}
	for _, args := range [][]string{{"-k", open}, {open, open}, {"--connect-timeout", "x", open}, {"ftp://" + open}} {
		if code, err := curl(args); code == 0 || err == nil {
			t.Errorf("curl %v: exit 0, want a refusal", args)
		}
	}
}
