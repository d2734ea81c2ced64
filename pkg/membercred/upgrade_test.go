package membercred

import (
	"net/http"
	"net/url"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/client-go/transport/websocket"
)

// TestUpgradeRequestsAreSentAtMostOnce: exec, attach and port-forward go
// through single-use upgrade round trippers (SPDY, WebSocket) that client-go
// builds from the same rest.Config. The SPDY round tripper adds its
// Connection/Upgrade headers inside the wrap chain, so the wrapper sees a
// plain POST; it must still never replay it.
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
			srv := newAPIServer(t, "new") // "old" is revoked, the Secret holds "new"
			st := storeWithToken("new")
			src, _, _ := newSource(t, st, "old", nil)
			cfg := restConfigFor(t, srv)
			cfg.Wrap(src.WrapTransport)
			rt := tt.rt(t, cfg)

			u, _ := url.Parse(srv.URL + "/api/v1/namespaces/default/pods/p/exec?command=true")
			req, _ := http.NewRequest(http.MethodPost, u.String(), nil)
			req.Header.Set("Sec-WebSocket-Protocol", "v5.channel.k8s.io") // what the WebSocket executor asks for
			resp, err := rt.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			if n := len(srv.requests()); n != 1 {
				t.Fatalf("server saw %d requests for one upgrade request, want 1: an upgrade round tripper is single-use", n)
			}
			// The 401 still forced a read: the next stream starts with the new
			// token. (The WebSocket round tripper turns the 401 into an
			// UpgradeFailureError carrying the Status; the wrapper reads that.)
			waitFor(t, "the forced read", func() bool { return st.calls.Load() == 1 && settled(src) })
			if tok, _ := src.Token(); tok.AccessToken != "new" {
				t.Errorf("token after the 401 = %q, want the Secret's new one", tok.AccessToken)
			}
		})
	}
}
