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
// Karmada tree. It uses only upstream API, so it compiles on both: it is RED on
// a pristine tree (the member client keeps the token it was built with) and
// GREEN once the member-credential patch is applied. If it ever passes on a
// pristine tree, upstream has fixed the bug and the patch can be dropped.

package util

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
)

// holdfastMember is a member API server that accepts exactly one bearer
// token at a time, so moving the accepted token is a hard revocation of the
// previous one.
type holdfastMember struct {
	server       *httptest.Server
	accepted     atomic.Value // string
	unauthorized atomic.Int64

	mu     sync.Mutex
	secret *corev1.Secret
}

func newHoldfastMember(t *testing.T, token string) *holdfastMember {
	t.Helper()
	m := &holdfastMember{}
	m.accepted.Store(token)
	m.server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+m.accepted.Load().(string) {
			m.unauthorized.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
			return
		}
		if r.URL.Path != "/api/v1/nodes/member-node" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Node","apiVersion":"v1","metadata":{"name":"member-node"}}`))
	}))
	t.Cleanup(m.server.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: m.server.Certificate().Raw})
	m.secret = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: "member1"},
		Data: map[string][]byte{
			clusterv1alpha1.SecretTokenKey:  []byte(token),
			clusterv1alpha1.SecretCADataKey: ca,
		},
	}
	return m
}

func (m *holdfastMember) clusterGetter(name string) (*clusterv1alpha1.Cluster, error) {
	return &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1alpha1.ClusterSpec{
			APIEndpoint: m.server.URL,
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1"},
		},
	}, nil
}

func (m *holdfastMember) secretGetter(namespace, name string) (*corev1.Secret, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if namespace != m.secret.Namespace || name != m.secret.Name {
		return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
	}
	return m.secret.DeepCopy(), nil
}

// writeSecretToken stands in for the rotator writing the new token into the
// cluster Secret.
func (m *holdfastMember) writeSecretToken(token string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.secret.Data[clusterv1alpha1.SecretTokenKey] = []byte(token)
}

// revokeAllBut makes the member accept only token, as deleting and recreating
// the ServiceAccount does.
func (m *holdfastMember) revokeAllBut(token string) { m.accepted.Store(token) }

// longLivedClient builds one client through BuildClusterConfig and keeps it,
// as an informer does for the lifetime of the controller-manager.
func (m *holdfastMember) longLivedClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	cfg, err := BuildClusterConfig("member1", m.clusterGetter, m.secretGetter)
	if err != nil {
		t.Fatalf("BuildClusterConfig: %v", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("building member client: %v", err)
	}
	if _, err := client.CoreV1().Nodes().Get(context.Background(), "member-node", metav1.GetOptions{}); err != nil {
		t.Fatalf("baseline request with the original token failed: %v", err)
	}
	return client
}

// TestHoldfastMemberClientSurvivesHardRevocation: the Secret already holds
// the new token when the old one is revoked. The long-lived client must keep
// working, and the caller must not see a single 401.
func TestHoldfastMemberClientSurvivesHardRevocation(t *testing.T) {
	m := newHoldfastMember(t, "token-a")
	client := m.longLivedClient(t)

	m.writeSecretToken("token-b")
	m.revokeAllBut("token-b")

	for i := 0; i < 3; i++ {
		if _, err := client.CoreV1().Nodes().Get(context.Background(), "member-node", metav1.GetOptions{}); err != nil {
			t.Fatalf("request %d after rotation and revocation: %v (the member client kept its original token)", i+1, err)
		}
	}
}

// TestHoldfastMemberClientRecoversWhenSecretArrivesLate: the old token is
// revoked before the rotator writes the new one. Requests fail until the
// Secret holds the new token, then the same client recovers without being
// rebuilt.
func TestHoldfastMemberClientRecoversWhenSecretArrivesLate(t *testing.T) {
	m := newHoldfastMember(t, "token-a")
	client := m.longLivedClient(t)

	m.revokeAllBut("token-b")
	_, err := client.CoreV1().Nodes().Get(context.Background(), "member-node", metav1.GetOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Fatalf("with the old token revoked and no new one published, want Unauthorized, got %v", err)
	}

	m.writeSecretToken("token-b")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var lastErr error
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, lastErr = client.CoreV1().Nodes().Get(ctx, "member-node", metav1.GetOptions{})
		return lastErr == nil, nil
	})
	if err != nil {
		t.Fatalf("the long-lived client never picked up the token published after revocation: %v", lastErr)
	}
}
