/*
Copyright 2026 The holdfast Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// This file is carried by holdfast into both the pristine and the patched
// Karmada tree. It uses only upstream API (the agent's run), so it compiles
// on both: it is RED on a pristine tree (the agent keeps the client
// certificate its kubeconfig held at startup) and GREEN once the agent
// follows its karmada-apiserver kubeconfig. If it ever passes on a pristine
// release, upstream follows a rotated agent credential and the patch can be
// dropped.

package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/karmada-io/karmada/cmd/agent/app/options"
)

// rotationBound is how long the agent gets to present the renewed
// certificate. The patched agent re-reads its kubeconfig at once on the
// first 401; the bound is generous because the machine may be loaded.
const rotationBound = 45 * time.Second

// memberToken is what the member cluster's kubeconfig (KUBECONFIG, read by
// controller-runtime's GetConfig) carries; the fake answers it as the
// member API server.
const memberToken = "holdfast-agent-member-token"

// TestHoldfastAgentFollowsRenewedCertificate runs karmada-agent's run with a
// karmada-apiserver kubeconfig holding client certificate "old". The
// karmada-apiserver rejects "old" with 401 from the agent's first request
// on, and at that moment the kubeconfig file holds a renewed certificate
// "new", as after the agent's own certRotation controller (or an operator)
// wrote it into the karmada-kubeconfig Secret and the kubelet swapped the
// volume: the agent must present "new" without a restart. Upstream's reads
// the kubeconfig once and is rejected from then on.
func TestHoldfastAgentFollowsRenewedCertificate(t *testing.T) {
	// "": the kubeconfig's current-context, as the chart and karmadactl
	// register run it; a --karmada-context, as upstream's artifacts/agent
	// manifest runs it.
	for _, karmadaContext := range []string{"", "c"} {
		t.Run("karmada-context="+karmadaContext, func(t *testing.T) { testAgentFollowsRenewedCertificate(t, karmadaContext) })
	}
}

func testAgentFollowsRenewedCertificate(t *testing.T, karmadaContext string) {
	dir := t.TempDir()
	pki := newTestPKI(t)
	kubeconfig := filepath.Join(dir, "karmada.config")
	cp := &controlPlane{t: t, kubeconfig: kubeconfig, pki: pki, seen: map[string]int{}, changed: make(chan struct{})}
	srv := httptest.NewUnstartedServer(cp)
	srv.TLS = &tls.Config{ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pki.pool}
	srv.StartTLS()
	defer srv.Close()
	cp.server = srv.URL
	serverCA := filepath.Join(dir, "server-ca.crt")
	if err := os.WriteFile(serverCA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cp.serverCA = serverCA
	cp.writeKubeconfig("old")
	member := filepath.Join(dir, "member.config")
	writeJSON(t, member, kubeconfigFor(srv.URL, serverCA, map[string]interface{}{"token": memberToken}))
	t.Setenv("KUBECONFIG", member)

	opts := options.NewOptions()
	opts.KarmadaKubeConfig = kubeconfig
	opts.KarmadaContext = karmadaContext
	opts.ClusterName = "member1"
	opts.ClusterNamespace = "karmada-cluster"
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0"
	opts.KubeAPIQPS, opts.KubeAPIBurst = 50, 100
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	var runErr error
	go func() {
		defer close(exited)
		runErr = run(ctx, opts)
	}()
	defer func() {
		cancel()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Errorf("the agent did not stop within 30s of its context's end")
		}
	}()

	if !cp.waitFor("new", rotationBound, exited) {
		cp.mu.Lock()
		defer cp.mu.Unlock()
		select {
		case <-exited:
			t.Fatalf("the agent gave up without presenting the renewed certificate (requests by certificate: %v); run returned: %#v", cp.seen, runErr)
		default:
			t.Fatalf("no karmada-apiserver request presented the renewed certificate within %s of the kubeconfig change; requests by certificate: %v", rotationBound, cp.seen)
		}
	}
}

// controlPlane is the karmada-apiserver and the member API server the
// agent's startup talks to, told apart by credential: the member's bearer
// token, or the agent's client certificate (its common name: "old" or
// "new"). Only what the agent asks before it registers is answered; the
// rest is 404, which ends run with an error once the test has its answer.
type controlPlane struct {
	t          *testing.T
	kubeconfig string
	server     string
	serverCA   string
	pki        *testPKI

	mu      sync.Mutex
	rotated bool
	seen    map[string]int // client certificate common name -> requests
	changed chan struct{}
}

func (c *controlPlane) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") == "Bearer "+memberToken {
		if r.Method == http.MethodGet && r.URL.Path == "/api/v1/namespaces/kube-system" {
			_, _ = w.Write([]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"kube-system","uid":"5f1c0a4e-0000-4000-8000-000000000001"}}`))
			return
		}
		notFound(w)
		return
	}
	cn := ""
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		cn = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	c.mu.Lock()
	c.seen[cn]++
	close(c.changed)
	c.changed = make(chan struct{})
	if cn == "old" && !c.rotated {
		// The renewal lands in the file the moment "old" is revoked.
		c.rotated = true
		c.writeKubeconfig("new")
	}
	c.mu.Unlock()
	if cn != "new" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`))
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/apis/cluster.karmada.io/v1alpha1/clusters" {
		_, _ = w.Write([]byte(`{"kind":"ClusterList","apiVersion":"cluster.karmada.io/v1alpha1","metadata":{"resourceVersion":"1"},"items":[]}`))
		return
	}
	notFound(w)
}

func notFound(w http.ResponseWriter) {
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
}

// waitFor reports whether a request with the certificate named cn arrived
// within bound, giving up early once stop is closed (the agent's run
// returned: nothing more will arrive).
func (c *controlPlane) waitFor(cn string, bound time.Duration, stop <-chan struct{}) bool {
	deadline := time.After(bound)
	for {
		c.mu.Lock()
		seen, changed := c.seen[cn] > 0, c.changed
		c.mu.Unlock()
		if seen {
			return true
		}
		select {
		case <-changed:
		case <-stop:
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.seen[cn] > 0
		case <-deadline:
			return false
		}
	}
}

// writeKubeconfig replaces the agent's kubeconfig, with the client
// certificate named cn inline, in one rename, as the kubelet's swap of a
// Secret volume's ..data does.
func (c *controlPlane) writeKubeconfig(cn string) {
	certPEM, keyPEM := c.pki.issue(c.t, cn)
	writeJSON(c.t, c.kubeconfig, kubeconfigFor(c.server, c.serverCA, map[string]interface{}{
		"client-certificate-data": certPEM, "client-key-data": keyPEM}))
}

func kubeconfigFor(server, ca string, user map[string]interface{}) map[string]interface{} {
	return map[string]interface{}{
		"apiVersion": "v1", "kind": "Config", "current-context": "c",
		"clusters": []interface{}{map[string]interface{}{"name": "c", "cluster": map[string]interface{}{
			"server": server, "certificate-authority": ca}}},
		"users":    []interface{}{map[string]interface{}{"name": "u", "user": user}},
		"contexts": []interface{}{map[string]interface{}{"name": "c", "context": map[string]interface{}{"cluster": "c", "user": "u"}}},
	}
}

func writeJSON(t *testing.T, path string, v interface{}) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Error(err)
		return
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		t.Error(err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Error(err)
	}
}

// testPKI is a client CA that issues the agent's certificates.
type testPKI struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "holdfast-test-client-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testPKI{cert: cert, key: key, pool: pool}
}

// issue returns a client certificate and key for cn, PEM-encoded as a
// kubeconfig's *-data fields hold them (JSON encodes []byte as base64).
func (p *testPKI) issue(t *testing.T, cn string) (certPEM, keyPEM []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Error(err)
		return nil, nil
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.cert, &key.PublicKey, p.key)
	if err != nil {
		t.Error(err)
		return nil, nil
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Error(err)
		return nil, nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
