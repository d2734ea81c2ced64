package membercred

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/httpstream"
	spdystream "k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/client-go/rest"
)

// exposing is a wrapper that says what it wraps, as client-go's do.
type exposing struct{ next http.RoundTripper }

func (e exposing) RoundTrip(req *http.Request) (*http.Response, error) { return e.next.RoundTrip(req) }
func (e exposing) WrappedRoundTripper() http.RoundTripper              { return e.next }

// cycle wraps itself; a walk down it must end.
type cycle struct{}

func (c *cycle) RoundTrip(*http.Request) (*http.Response, error) { return nil, errors.New("unused") }
func (c *cycle) WrappedRoundTripper() http.RoundTripper          { return c }

// webSocketShaped has the method by which the WebSocket round tripper is
// recognised without importing it.
type webSocketShaped struct{ countingTransport }

func (*webSocketShaped) DataBufferSize() int { return 32 << 10 }

func TestReplayable(t *testing.T) {
	upgrader, err := spdystream.NewRoundTripper(nil)
	if err != nil {
		t.Fatal(err)
	}
	transport := &http.Transport{}
	hidden := &proxyHeaderStandIn{roundTripper: transport}
	const url = "https://member.invalid/api/v1/pods"
	newReq := func(method string, body io.Reader, header ...string) *http.Request {
		r, err := http.NewRequest(method, url, body)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(header); i += 2 {
			r.Header.Add(header[i], header[i+1])
		}
		return r
	}
	emptyMethod := newReq(http.MethodGet, nil)
	emptyMethod.Method = "" // net/http reads it as GET
	failingGetBody := newReq(http.MethodPost, strings.NewReader("x"))
	failingGetBody.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("gone") }

	tests := []struct {
		name string
		req  *http.Request
		next http.RoundTripper
		want bool
	}{
		{"GET through *http.Transport", newReq(http.MethodGet, nil), transport, true},
		{"GET through wrappers that say what they wrap", newReq(http.MethodGet, nil), exposing{exposing{transport}}, true},
		{"GET through a hidden chain", newReq(http.MethodGet, nil), hidden, true},
		{"GET through nothing known", newReq(http.MethodGet, nil), nil, true},
		{"empty method through a hidden chain", emptyMethod, hidden, true},
		{"HEAD through a hidden chain", newReq(http.MethodHead, nil), hidden, true},
		{"OPTIONS through a hidden chain", newReq(http.MethodOptions, nil), hidden, true},
		{"TRACE through a hidden chain", newReq(http.MethodTrace, nil), hidden, true},
		{"POST with GetBody through *http.Transport", newReq(http.MethodPost, strings.NewReader("x")), exposing{transport}, true},
		{"POST with GetBody through a hidden chain", newReq(http.MethodPost, strings.NewReader("x")), hidden, false},
		{"POST without body through a hidden chain", newReq(http.MethodPost, nil), hidden, false},
		{"PUT through a hidden chain", newReq(http.MethodPut, strings.NewReader("x")), hidden, false},
		{"PATCH through a hidden chain", newReq(http.MethodPatch, strings.NewReader("x")), hidden, false},
		{"DELETE through a hidden chain", newReq(http.MethodDelete, nil), hidden, false},
		{"POST through a wrapper cycle", newReq(http.MethodPost, strings.NewReader("x")), &cycle{}, false},
		{"body without GetBody", newReq(http.MethodPost, onceReader{strings.NewReader("x")}), transport, false},
		{"GetBody failing", failingGetBody, transport, false},
		{"SPDY round tripper", newReq(http.MethodGet, nil), upgrader, false},
		{"SPDY round tripper, wrapped", newReq(http.MethodGet, nil), exposing{upgrader}, false},
		{"WebSocket round tripper", newReq(http.MethodGet, nil), &webSocketShaped{}, false},
		{"Upgrade header", newReq(http.MethodGet, nil, "Upgrade", "websocket"), transport, false},
		{"Connection: Upgrade alone", newReq(http.MethodGet, nil, "Connection", "keep-alive, Upgrade"), transport, false},
		{"SPDY protocol negotiation", newReq(http.MethodGet, nil, httpstream.HeaderProtocolVersion, "v5.channel.k8s.io"), transport, false},
		{"WebSocket protocol negotiation", newReq(http.MethodGet, nil, "Sec-WebSocket-Protocol", "v5.channel.k8s.io"), transport, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := replayable(tt.req, tt.next)
			if ok != tt.want {
				t.Fatalf("replayable = %v, want %v", ok, tt.want)
			}
			if !ok {
				return
			}
			if tt.req.Body == nil {
				if r != tt.req {
					t.Errorf("a request without body came back as a copy")
				}
				return
			}
			if r.Body == tt.req.Body {
				t.Fatal("the replay shares the spent body")
			}
			if b, _ := io.ReadAll(r.Body); string(b) != "x" {
				t.Errorf("replay body %q, want %q", b, "x")
			}
		})
	}
}

// TestGuardNeverReplaysAnUpgrade: the own-credential guard replays a 401 with
// the rotated token file's token, and sits in WrapTransport, right above
// client-go's SPDY round tripper for the process's own exec or port-forward.
// That upgrade must still reach the API server once.
func TestGuardNeverReplaysAnUpgrade(t *testing.T) {
	srv := newChainServer(t, "new")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newGuard(t, OwnCredentialGuardOptions{})
	cred := newOwnCredential(&rest.Config{BearerTokenFile: tokenFile}) // remembers "old", as the bearer wrapper serves it
	if err := os.WriteFile(tokenFile, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	upgrader, err := spdystream.NewRoundTripper(srv.Client().Transport.(*http.Transport).TLSClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	rt := &ownCredentialRoundTripper{guard: f.guard, cred: cred, next: upgrader}

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/namespaces/default/pods/p/exec?command=true", nil)
	req.Header.Set("Authorization", "Bearer old") // set by client-go's bearer wrapper, outside the guard
	upgradeOnce(t, srv, upgrader, rt, req)
}

// TestGuardReplaysAPostThroughTransport: the guard's replay decision looks at
// the chain below it; ending in *http.Transport, a create is replayed.
func TestGuardReplaysAPostThroughTransport(t *testing.T) {
	srv := newChainServer(t, "new")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newGuard(t, OwnCredentialGuardOptions{})
	cred := newOwnCredential(&rest.Config{BearerTokenFile: tokenFile})
	if err := os.WriteFile(tokenFile, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rt := &ownCredentialRoundTripper{guard: f.guard, cred: cred, next: srv.Client().Transport}

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/namespaces/default/pods", bytes.NewReader([]byte(`{"kind":"Pod"}`)))
	req.Header.Set("Authorization", "Bearer old")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST: %d, want 200 through the replay", resp.StatusCode)
	}
	if got := srv.seen(); len(got) != 2 || got[1] != "new" {
		t.Errorf("server saw tokens %q, want [old new]", got)
	}
}
