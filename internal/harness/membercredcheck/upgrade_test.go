package membercredcheck

import (
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/client-go/transport/websocket"

	"github.com/holdfast-dist/holdfast/pkg/membercred"
)

// memberAPI accepts only the token "new" and counts requests.
type memberAPI struct {
	*httptest.Server
	mu   sync.Mutex
	seen int
}

func newMemberAPI(t *testing.T) *memberAPI {
	t.Helper()
	m := &memberAPI{}
	m.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.seen++
		m.mu.Unlock()
		if r.Header.Get("Authorization") == "Bearer new" {
			w.WriteHeader(http.StatusBadRequest) // no stream is served here; only the count matters
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`)
	}))
	m.Config.ErrorLog = log.New(io.Discard, "", 0)
	m.StartTLS()
	t.Cleanup(m.Close)
	return m
}

func (m *memberAPI) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen
}

// TestUpgradeRequestsAreSentAtMostOnce: exec, attach and port-forward go
// through single-use upgrade round trippers (SPDY, WebSocket) that client-go
// builds from the same rest.Config. The SPDY round tripper adds its
// Connection/Upgrade headers inside the wrap chain, so the wrapper sees a
// plain POST; it must still never replay it, and the 401 must still make the
// source read the Secret so that the next stream carries the new token.
func TestUpgradeRequestsAreSentAtMostOnce(t *testing.T) {
	tests := []struct {
		name string
		rt   func(t *testing.T, cfg *rest.Config) http.RoundTripper
	}{
		{"spdy.RoundTripperFor", func(t *testing.T, cfg *rest.Config) http.RoundTripper {
			rt, _, err := spdy.RoundTripperFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return rt
		}},
		{"websocket.RoundTripperFor", func(t *testing.T, cfg *rest.Config) http.RoundTripper {
			rt, _, err := websocket.RoundTripperFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return rt
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newMemberAPI(t) // "old" is revoked, the Secret holds "new"
			var mu sync.Mutex
			reads := 0
			src, err := membercred.NewSecretTokenSource(membercred.SecretTokenSourceOptions{
				Cluster: "member1", Namespace: "karmada-cluster", Name: "member1", InitialToken: "old",
				Logger: funcr.New(func(string, string) {}, funcr.Options{}),
				Getter: func(string, string) (*corev1.Secret, error) {
					mu.Lock()
					reads++
					mu.Unlock()
					return &corev1.Secret{Data: map[string][]byte{membercred.SecretTokenKey: []byte("new")}}, nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{
				CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}}
			cfg.Wrap(src.WrapTransport)
			rt := tt.rt(t, cfg)

			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/namespaces/default/pods/p/exec?command=true", nil)
			req.Header.Set("Sec-WebSocket-Protocol", "v5.channel.k8s.io") // what the WebSocket executor asks for
			if resp, err := rt.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
			if n := srv.requests(); n != 1 {
				t.Fatalf("server saw %d requests for one upgrade request, want 1: an upgrade round tripper is single-use", n)
			}
			// The WebSocket round tripper reports the 401 as an
			// UpgradeFailureError carrying the Status; the wrapper reads that.
			deadline := time.Now().Add(30 * time.Second)
			for {
				tok, err := src.Token()
				if err == nil && tok.AccessToken == "new" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("token after the 401 = %v, %v; want the Secret's new one", tok, err)
				}
				time.Sleep(time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			if reads != 1 {
				t.Errorf("getter called %d times, want 1", reads)
			}
		})
	}
}
