package hubfollowtest

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// Hub is a stand-in hub API server (TLS, on 127.0.0.1) serving one worker's
// Cluster and the discovery a controller-runtime client needs to find it. It
// answers 401 to any token but its own, so a client aimed at one hub with the
// other hub's credential fails as it would in production.
type Hub struct {
	// Server is the hub's TLS server: its URL, certificate and client.
	Server *httptest.Server
	// Requests counts every request the hub has received, refused ones too.
	Requests atomic.Int64

	clusterPath string
	namespace   string
	name        string

	mu     sync.Mutex
	token  string
	status int
	body   []byte
	auth   []string // Authorization headers seen
}

// NewHub starts a hub serving the Cluster name in namespace, accepting only
// token, and publishing nothing. It stops when t ends.
func NewHub(t testing.TB, namespace, name, token string) *Hub {
	t.Helper()
	h := &Hub{
		clusterPath: "/apis/controller.kubeslice.io/v1alpha1/namespaces/" + namespace + "/clusters/" + name,
		namespace:   namespace,
		name:        name,
		token:       token,
	}
	h.PublishStatus(nil)
	h.Server = httptest.NewTLSServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Server.Close)
	return h
}

// URL is the hub's endpoint.
func (h *Hub) URL() string { return h.Server.URL }

// CAPEM is the hub's serving certificate, PEM, as a mounted CA file holds it.
func (h *Hub) CAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.Server.Certificate().Raw})
}

// Token is the token the hub accepts.
func (h *Hub) Token() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.token
}

// AcceptOnly makes the hub accept only token, as after the worker's token
// was revoked and a new one minted.
func (h *Hub) AcceptOnly(token string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.token = token
}

// Respond makes a GET of the Cluster answer status with body as it is, for
// what no API server sends but a broken proxy might.
func (h *Hub) Respond(status int, body []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status, h.body = status, body
}

// PublishStatus serves the Cluster with status (an empty status when nil).
func (h *Hub) PublishStatus(status map[string]interface{}) {
	b, err := json.Marshal(Cluster(h.namespace, h.name, status))
	if err != nil {
		panic(err) // only maps of JSON values are ever passed
	}
	h.Respond(http.StatusOK, b)
}

// Publish serves the Cluster with activeController as its only status
// field, or with an empty status when activeController is nil.
func (h *Hub) Publish(activeController map[string]interface{}) {
	if activeController == nil {
		h.PublishStatus(nil)
		return
	}
	h.PublishStatus(map[string]interface{}{"activeController": activeController})
}

// Authorizations returns the Authorization headers the hub has seen.
func (h *Hub) Authorizations() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.auth...)
}

func (h *Hub) serve(w http.ResponseWriter, r *http.Request) {
	h.Requests.Add(1)
	h.mu.Lock()
	h.auth = append(h.auth, r.Header.Get("Authorization"))
	token, status, body := h.token, h.status, h.body
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+token {
		WriteStatus(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if r.Method != http.MethodGet {
		WriteStatus(w, http.StatusNotFound, "NotFound")
		return
	}
	switch r.URL.Path {
	case h.clusterPath:
		w.WriteHeader(status)
		_, _ = w.Write(body)
	case "/apis":
		_, _ = w.Write([]byte(`{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"controller.kubeslice.io",` +
			`"versions":[{"groupVersion":"controller.kubeslice.io/v1alpha1","version":"v1alpha1"}],` +
			`"preferredVersion":{"groupVersion":"controller.kubeslice.io/v1alpha1","version":"v1alpha1"}}]}`))
	case "/apis/controller.kubeslice.io/v1alpha1":
		_, _ = w.Write([]byte(`{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"controller.kubeslice.io/v1alpha1",` +
			`"resources":[{"name":"clusters","singularName":"cluster","namespaced":true,"kind":"Cluster","verbs":["get","list","watch"]}]}`))
	default:
		WriteStatus(w, http.StatusNotFound, "NotFound")
	}
}

// WriteStatus answers with a metav1.Status failure, as the API server does.
func WriteStatus(w http.ResponseWriter, code int, reason string) {
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]interface{}{
		"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code,
	})
}
