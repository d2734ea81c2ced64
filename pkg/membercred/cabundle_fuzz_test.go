package membercred

import (
	"crypto/x509"
	"encoding/pem"
	"regexp"
	"testing"
)

// refusals are the only shapes a refusal's detail takes: counts and sizes,
// never a byte of the value (which may be a private key put there by
// mistake).
var refusals = regexp.MustCompile(`^(is \d+ bytes, more than the \d+ a Secret can hold` +
	`|is empty|holds no PEM block` +
	`|holds no certificate but \d+ private key\(s\) among \d+ PEM block\(s\)` +
	`|holds no usable certificate among \d+ PEM block\(s\) \(\d+ unparsable\))$`)

// FuzzParseCABundle: the bundle parser never panics, takes a value exactly
// when client-go's root pool (AppendCertsFromPEM) does, and describes a
// refusal without quoting the value.
func FuzzParseCABundle(f *testing.F) {
	ca := newTestCA(f, "seed", nil)
	f.Add(ca.pem())
	f.Add(append(ca.pem(), ca.pem()...))
	f.Add([]byte(""))
	f.Add([]byte(" \n"))
	f.Add([]byte("garbage"))
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte{1, 2, 3}}))
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{0x30, 0x03, 0x02, 0x01, 0x01}}))
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Headers: map[string]string{"k": "v"}, Bytes: ca.cert.Raw}))
	f.Fuzz(func(t *testing.T, raw []byte) {
		snap, detail := parseCABundle(raw)
		if detail != "" {
			if snap != nil {
				t.Fatalf("refused (%q) with a bundle", detail)
			}
			if !refusals.MatchString(detail) {
				t.Fatalf("refusal %q is not one of the fixed shapes", detail)
			}
		} else if snap == nil || len(snap.certs) == 0 || snap.pool == nil {
			t.Fatalf("taken without a certificate: %+v", snap)
		}
		if len(raw) <= MaxCABundleBytes {
			if ok := x509.NewCertPool().AppendCertsFromPEM(raw); ok != (detail == "") {
				t.Fatalf("client-go's root pool takes it: %v; parseCABundle refuses: %q", ok, detail)
			}
		}
		if snap != nil {
			// A bundle never drops its own certificates.
			if snap.drops(snap) {
				t.Fatal("a bundle drops a certificate of itself")
			}
		}
	})
}
