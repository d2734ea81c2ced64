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

// Carried by holdfast into both the pristine and the patched Karmada tree,
// using only upstream API: RED on pristine (BuildClusterConfig freezes the
// Secret's caBundle into CAData), GREEN once the member CA bundle patch is
// applied. Passing on pristine means upstream follows a renewed member CA
// and the patch can be dropped.

package util

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
)

// holdfastCA is a member API server's certificate authority.
type holdfastCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var holdfastSerial atomic.Int64

func newHoldfastCA(t *testing.T, cn string) *holdfastCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(holdfastSerial.Add(1)), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &holdfastCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// serving issues the member API server's certificate for 127.0.0.1.
func (ca *holdfastCA) serving(t *testing.T) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(holdfastSerial.Add(1)), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// holdfastCAMember is a member API server whose serving certificate can be
// replaced in place, as restarting kube-apiserver on the same port with a
// certificate from a renewed CA does, and whose cluster Secret holds a
// caBundle the test rewrites as the CA rotator would.
type holdfastCAMember struct {
	server *httptest.Server
	cert   atomic.Pointer[tls.Certificate]

	mu     sync.Mutex
	secret *corev1.Secret
}

func newHoldfastCAMember(t *testing.T, ca *holdfastCA) *holdfastCAMember {
	t.Helper()
	m := &holdfastCAMember{}
	m.cert.Store(ca.serving(t))
	m.server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/nodes/member-node" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Node","apiVersion":"v1","metadata":{"name":"member-node"}}`))
	}))
	m.server.Config.ErrorLog = log.New(io.Discard, "", 0)
	// GetConfigForClient: httptest's own certificate would win for a client
	// sending no SNI (an IP address) over GetCertificate.
	m.server.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return &tls.Config{Certificates: []tls.Certificate{*m.cert.Load()}}, nil
	}}
	m.server.StartTLS()
	t.Cleanup(m.server.Close)
	m.secret = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: "member1"},
		Data: map[string][]byte{
			clusterv1alpha1.SecretTokenKey:  []byte("token-a"),
			clusterv1alpha1.SecretCADataKey: ca.pem,
		},
	}
	return m
}

func (m *holdfastCAMember) clusterGetter(name string) (*clusterv1alpha1.Cluster, error) {
	return &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1alpha1.ClusterSpec{
			APIEndpoint: m.server.URL,
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1"},
		},
	}, nil
}

func (m *holdfastCAMember) secretGetter(namespace, name string) (*corev1.Secret, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if namespace != m.secret.Namespace || name != m.secret.Name {
		return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
	}
	return m.secret.DeepCopy(), nil
}

func (m *holdfastCAMember) writeSecretCABundle(bundle []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.secret.Data[clusterv1alpha1.SecretCADataKey] = bundle
}

// restartWith serves a certificate of ca from now on and drops every
// connection, as a restarted kube-apiserver does.
func (m *holdfastCAMember) restartWith(t *testing.T, ca *holdfastCA) {
	m.cert.Store(ca.serving(t))
	m.server.CloseClientConnections()
}

func (m *holdfastCAMember) longLivedClient(t *testing.T, name string) kubernetes.Interface {
	t.Helper()
	cfg, err := BuildClusterConfig(name, m.clusterGetter, m.secretGetter)
	if err != nil {
		t.Fatalf("BuildClusterConfig: %v", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("building member client: %v", err)
	}
	if _, err := client.CoreV1().Nodes().Get(context.Background(), "member-node", metav1.GetOptions{}); err != nil {
		t.Fatalf("baseline request with the original CA failed: %v", err)
	}
	return client
}

// TestHoldfastMemberClientFollowsCABundleRotation: the member API server
// restarts with a certificate from a new CA, then the Secret's caBundle is
// replaced. The long-lived client must recover within MaxReadWait (5s) and
// a second of that, without being rebuilt.
func TestHoldfastMemberClientFollowsCABundleRotation(t *testing.T) {
	oldCA, newCA := newHoldfastCA(t, "member-ca-1"), newHoldfastCA(t, "member-ca-2")
	m := newHoldfastCAMember(t, oldCA)
	client := m.longLivedClient(t, "member-ca-rotation")

	m.restartWith(t, newCA)
	m.writeSecretCABundle(newCA.pem)
	deadline := time.Now().Add(6 * time.Second)
	var err error
	for {
		if _, err = client.CoreV1().Nodes().Get(context.Background(), "member-node", metav1.GetOptions{}); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the long-lived member client still fails 6s after the Secret holds the new CA (it kept the caBundle it was built with): %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestHoldfastMemberClientSurvivesCAOverlap: the new CA is published beside
// the old one before the server switches. The long-lived client must not see
// a single failure.
func TestHoldfastMemberClientSurvivesCAOverlap(t *testing.T) {
	oldCA, newCA := newHoldfastCA(t, "member-ca-1"), newHoldfastCA(t, "member-ca-2")
	m := newHoldfastCAMember(t, oldCA)
	client := m.longLivedClient(t, "member-ca-overlap")

	m.writeSecretCABundle(append(append([]byte(nil), oldCA.pem...), newCA.pem...))
	m.restartWith(t, newCA)
	for i := 0; i < 3; i++ {
		if _, err := client.CoreV1().Nodes().Get(context.Background(), "member-node", metav1.GetOptions{}); err != nil {
			t.Fatalf("request %d after the switch, with old and new CA in the Secret: %v (the member client kept the caBundle it was built with)", i+1, err)
		}
	}
}
