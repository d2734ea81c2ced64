package controlplane

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestServiceAccountsOnAnyServer checks ServiceAccounts against an API
// server that is no Cluster: only an admin config reaches it.
func TestServiceAccountsOnAnyServer(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		mu.Lock()
		seen = append(seen, auth)
		mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != "/apis/authentication.k8s.io/v1/selfsubjectreviews" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch auth {
		case "Bearer good-token":
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","status":{"userInfo":{"username":"system:serviceaccount:ns:sa"}}}`))
		case "Bearer revoked-token":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`))
		default:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"broken","code":500}`))
		}
	}))
	t.Cleanup(srv.Close)
	admin := &rest.Config{Host: srv.URL, BearerToken: "admin-secret"}
	s, err := NewServiceAccounts("some-apiserver", admin)
	if err != nil {
		t.Fatal(err)
	}
	// The caller's config is its own to change afterwards.
	admin.Host = "https://127.0.0.1:1"
	ctx := t.Context()

	if ok, err := s.TokenAccepted(ctx, "good-token"); err != nil || !ok {
		t.Errorf("good token: accepted %v, %v; want accepted", ok, err)
	}
	if ok, err := s.TokenAccepted(ctx, "revoked-token"); err != nil || ok {
		t.Errorf("revoked token: accepted %v, %v; want rejected without an error", ok, err)
	}
	ok, err := s.TokenAccepted(ctx, "eyJ-other-token")
	if err == nil || ok {
		t.Errorf("server error: accepted %v, %v; want an error", ok, err)
	} else if !strings.HasPrefix(err.Error(), "some-apiserver: ") || strings.Contains(err.Error(), "eyJ") {
		t.Errorf("server error: %q, want it to name the server and not the token", err)
	}
	mu.Lock()
	for _, auth := range seen {
		if strings.Contains(auth, "admin-secret") {
			t.Errorf("a token check sent the admin credential: %d requests", len(seen))
			break
		}
	}
	mu.Unlock()

	_, err = s.Token(ctx, "ns", "sa", time.Minute)
	if err == nil || !strings.HasPrefix(err.Error(), "some-apiserver: ServiceAccount ns/sa: token lifetime 1m0s is below") {
		t.Errorf("a one-minute token: err = %v, want the server and the TokenRequest minimum named", err)
	}
}

func TestNewServiceAccountsWithoutConfig(t *testing.T) {
	if _, err := NewServiceAccounts("some-apiserver", nil); err == nil || !strings.Contains(err.Error(), "some-apiserver") {
		t.Errorf("nil admin config: err = %v, want an error naming the server", err)
	}
}
