package controlplane

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPKIServingCertVerifiesFor127001AndLocalhost(t *testing.T) {
	now := time.Now()
	keys, err := newPKI("member1", now, 1)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(keys.servingCert, keys.servingKey)
	if err != nil {
		t.Fatalf("serving cert and key do not pair: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(keys.caCert) {
		t.Fatal("CA PEM does not parse")
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("serving cert does not verify for %s: %v", host, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: roots}); err == nil {
		t.Error("serving cert verifies for example.com")
	}
	// Valid now, and not for long.
	if leaf.NotBefore.After(now) || leaf.NotAfter.Before(now.Add(time.Hour)) || leaf.NotAfter.After(now.Add(48*time.Hour)) {
		t.Errorf("validity %s..%s does not cover now..now+1h within two days", leaf.NotBefore, leaf.NotAfter)
	}
	if _, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok {
		t.Errorf("serving key is %T, want ECDSA", leaf.PublicKey)
	}
}

// TestPKINextSetsVerifyOnlyAgainstTheirOwnCA: each CA RestartWithNextCA
// switches to is new, and its serving certificate is not one an earlier CA
// signed, or a client trusting only the earlier one would not fail.
func TestPKINextSetsVerifyOnlyAgainstTheirOwnCA(t *testing.T) {
	keys, err := newPKI("member1", time.Now(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys.next) != 2 {
		t.Fatalf("%d next sets, want 2", len(keys.next))
	}
	cas := [][]byte{keys.caCert, keys.next[0].caCert, keys.next[1].caCert}
	for i, set := range keys.next {
		pair, err := tls.X509KeyPair(set.servingCert, set.servingKey)
		if err != nil {
			t.Fatalf("next set %d: serving cert and key do not pair: %v", i, err)
		}
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		for j, ca := range cas {
			roots := x509.NewCertPool()
			if !roots.AppendCertsFromPEM(ca) {
				t.Fatalf("CA %d does not parse", j)
			}
			_, err := leaf.Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: roots})
			if own := j == i+1; own != (err == nil) {
				t.Errorf("next set %d's serving cert against CA %d: err %v, want it to verify only against its own CA", i, j, err)
			}
		}
	}
}

func TestPKIClustersGetDifferentCAs(t *testing.T) {
	a, err := newPKI("a", time.Now(), 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newPKI("b", time.Now(), 1)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(a.caCert)
	block, _ := pem.Decode(b.servingCert)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: roots}); err == nil {
		t.Error("cluster b's serving cert verifies against cluster a's CA")
	}
}

func TestPKIServiceAccountKeyPair(t *testing.T) {
	keys, err := newPKI("x", time.Now(), 1)
	if err != nil {
		t.Fatal(err)
	}
	privBlock, _ := pem.Decode(keys.saKey)
	pubBlock, _ := pem.Decode(keys.saPub)
	if privBlock == nil || privBlock.Type != "EC PRIVATE KEY" || pubBlock == nil || pubBlock.Type != "PUBLIC KEY" {
		t.Fatalf("SA key PEM types: %v / %v", privBlock, pubBlock)
	}
	priv, err := x509.ParseECPrivateKey(privBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.ParsePKIXPublicKey(pubBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !priv.PublicKey.Equal(pub) {
		t.Error("sa.pub is not the public half of sa.key")
	}
}

func TestPKIWriteKeepsKeysPrivate(t *testing.T) {
	keys, err := newPKI("x", time.Now(), 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "certs")
	if err := keys.write(dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{caCertFile: 0o644, servingCertFile: 0o644, servingKeyFile: 0o600, saKeyFile: 0o600, saPubFile: 0o644} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
}

// TestPKIServingCertCarriesExtraIPs: a node's pods dial kube-apiserver at
// the host end of the node's veth and at the "kubernetes" ClusterIP, and
// verify the serving certificate for both.
func TestPKIServingCertCarriesExtraIPs(t *testing.T) {
	keys, err := newPKI("node", time.Now(), 1, net.ParseIP("198.18.7.1"), nil, net.ParseIP("198.19.7.129"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(keys.servingCert)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(keys.caCert)
	for _, host := range []string{"127.0.0.1", "198.18.7.1", "198.19.7.129"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots}); err != nil {
			t.Errorf("serving cert does not verify for %s: %v", host, err)
		}
	}
}
