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

package holdfast

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// hubCA is one generation of a hub API server's certificate authority.
type hubCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

var hubSerial atomic.Int64

func newHubCA(t *testing.T) *hubCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(hubSerial.Add(1)), Subject: pkix.Name{CommonName: "hub-ca"},
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
	return &hubCA{cert: cert, key: key}
}

func (ca *hubCA) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

func (ca *hubCA) serving(t *testing.T) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(hubSerial.Add(1)), Subject: pkix.Name{CommonName: "hub-apiserver"},
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

// renewableHub is a fakeAPIServer whose CA can be renewed: the server then
// presents a certificate from the new CA on the same port and drops every
// connection, as a restarted hub kube-apiserver does, and its CA file, laid
// out as a kubelet Secret volume, is swapped through its ..data symlink.
// It counts what it answered on connections made since the last renewal.
type renewableHub struct {
	*fakeAPIServer
	volume string
	cert   atomic.Pointer[tls.Certificate]
	gen    atomic.Int64
	// probedNew and servedNew count the Cluster CR reads (failover probes)
	// and the hub manager's WATCHes of hubResource on connections accepted
	// since the renewal.
	probedNew, servedNew atomic.Int64
	volumeGen            int
}

type connGenKey struct{}

func newRenewableHub(t *testing.T, name string) *renewableHub {
	t.Helper()
	f := &fakeAPIServer{
		token:     "token-of-" + name,
		discovery: map[string][]byte{},
		kinds:     map[string]schema.GroupVersionKind{},
		closing:   make(chan struct{}),
		revoked:   make(chan struct{}),
		lists:     map[string]int{},
	}
	f.buildDiscovery()
	h := &renewableHub{fakeAPIServer: f, volume: t.TempDir()}
	ca := newHubCA(t)
	h.cert.Store(ca.serving(t))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(connGenKey{}) == h.gen.Load() && r.Header.Get("Authorization") == "Bearer "+f.token {
			switch {
			case r.URL.Path == fmt.Sprintf("/apis/controller.kubeslice.io/v1alpha1/namespaces/%s/clusters/%s", projectNamespace, clusterName):
				h.probedNew.Add(1)
			case strings.HasSuffix(r.URL.Path, "/"+hubResource) && r.URL.Query().Get("watch") != "":
				// The hub manager's informer: a client built once and kept.
				// (The worker also builds short-lived clients, which read the
				// CA file anew on pristine too.)
				h.servedNew.Add(1)
			}
		}
		f.serve(w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connGenKey{}, h.gen.Load())
	}
	srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return &tls.Config{Certificates: []tls.Certificate{*h.cert.Load()}}, nil
	}}
	srv.StartTLS()
	f.srv = srv
	t.Cleanup(func() {
		close(f.closing)
		f.srv.Close()
	})
	f.tokenFile = writeFile(t, t.TempDir(), "token", f.token)
	h.writeVolume(t, ca.pem())
	if err := os.Symlink(filepath.Join("..data", "ca.crt"), filepath.Join(h.volume, "ca.crt")); err != nil {
		t.Fatal(err)
	}
	f.caFile = filepath.Join(h.volume, "ca.crt")
	return h
}

// writeVolume publishes caBundle as the kubelet updates a Secret volume: a
// new timestamped directory, then the ..data symlink renamed over the old.
func (h *renewableHub) writeVolume(t *testing.T, caBundle []byte) {
	t.Helper()
	h.volumeGen++
	data := fmt.Sprintf("..2026_12_04_10_00_%02d.%d", h.volumeGen, h.volumeGen)
	if err := os.Mkdir(filepath.Join(h.volume, data), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(h.volume, data), "ca.crt", string(caBundle))
	tmp := filepath.Join(h.volume, "..data_tmp")
	if err := os.Symlink(data, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(h.volume, "..data")); err != nil {
		t.Fatal(err)
	}
}

// renewCA replaces the hub's CA: the kubelet swaps the CA file, then the
// hub restarts serving a certificate of the new CA.
func (h *renewableHub) renewCA(t *testing.T) {
	t.Helper()
	ca := newHubCA(t)
	h.writeVolume(t, ca.pem())
	h.cert.Store(ca.serving(t))
	h.gen.Add(1)
	h.srv.CloseClientConnections()
}

// TestWorkerFollowsARenewedHubCA: the Active hub's CA is renewed (CA file
// swapped by the kubelet, hub restarted with a certificate of the new CA).
// Without a restart the worker's hub manager and its failover probes reach
// the hub again, and it still follows a failover to the secondary.
func TestWorkerFollowsARenewedHubCA(t *testing.T) {
	workerAPI, hubA, hubB := newFakeAPIServer(t, "worker"), newRenewableHub(t, "hub-a"), newFakeAPIServer(t, "hub-b")
	hubA.declare("hub-a", hubA.URL())
	hubB.declare("hub-a", hubA.URL())
	worker := startWorker(t, workerAPI, hubSettings(hubA.URL(), hubA.fakeAPIServer, hubB))
	if got := waitForHubManager(t, worker, hubA.fakeAPIServer, hubB); got != hubA.fakeAPIServer {
		t.Fatalf("the hub manager connected to the secondary; both hubs declare the primary Active")
	}

	hubA.renewCA(t)
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, bound, true, func(context.Context) (bool, error) {
		select {
		case <-worker.exited:
			return false, fmt.Errorf("the worker exited")
		default:
		}
		return hubA.servedNew.Load() > 0, nil
	})
	if err != nil {
		t.Fatalf("after the hub's CA was renewed and its CA file swapped, the worker never reached the hub again without a restart (%v)", err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, bound, true, func(context.Context) (bool, error) {
		return hubA.probedNew.Load() > 0, nil
	})
	if err != nil {
		t.Fatalf("the failover probes never read the hub with the renewed CA (%v)", err)
	}

	hubB.declare("hub-b", hubB.URL())
	hubA.declare("hub-b", hubB.URL())
	if code := worker.waitExit(t, "after both hubs declared the secondary"); code != 0 {
		t.Fatalf("exit code after a confirmed switch = %d, want 0", code)
	}
}
