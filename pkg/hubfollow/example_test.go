package hubfollow_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/holdfast-dist/holdfast/pkg/hubfollow"
)

// The worker resolves its hub before building any hub client, builds them all
// from the returned Connection, and runs the follower next to its manager.
// Here hub-b has been promoted and both hubs publish that on the worker's
// Cluster CR, so the worker starts against the secondary.
func Example() {
	dir, _ := os.MkdirTemp("", "hubfollow-example")
	defer os.RemoveAll(dir)
	primary, secondary := exampleHub(dir, "a"), exampleHub(dir, "b")
	defer primary.Close()
	defer secondary.Close()
	primary.declare("hub-b", secondary.URL)
	secondary.declare("hub-b", secondary.URL)

	env := map[string]string{
		"HUB_HOST_ENDPOINT":           primary.URL,
		"HUB_TOKEN_FILE":              primary.tokenFile,
		"HUB_CA_FILE":                 primary.caFile,
		"HUB_SECONDARY_HOST_ENDPOINT": secondary.URL,
		"HUB_SECONDARY_TOKEN_FILE":    secondary.tokenFile,
		"HUB_SECONDARY_CA_FILE":       secondary.caFile,
		"CLUSTER_NAME":                "worker-1",
		"HUB_PROJECT_NAMESPACE":       "kubeslice-acme",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok } // os.LookupEnv in the worker

	// In the worker: ctx from ctrl.SetupSignalHandler, so cancelling it makes
	// the manager return and the process exit 0.
	ctx, stopWorker := context.WithCancel(context.Background())
	defer stopWorker()
	cfg, err := hubfollow.ConfigFromEnv(lookup, logr.Discard())
	if err != nil {
		panic(err) // the worker logs it and exits 1: a tuning value is set and invalid
	}
	conn, follower, err := hubfollow.Start(ctx, cfg, hubfollow.Options{
		Registerer: prometheus.NewRegistry(), // ctrlmetrics.Registry in the worker
		Stop:       stopWorker,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	hubConfig := conn.RESTConfig() // every hub client and the hub manager are built from this
	fmt.Println("connect to:", conn.Name, hubConfig.Host == secondary.URL)

	go func() { _ = follower.Run(ctx) }() // every replica, leader or not
	// Output: connect to: secondary true
}

// exampleHub is a stand-in hub API server serving the worker's Cluster CR,
// with the token and CA files a mounted Secret would provide.
type exampleHubServer struct {
	*httptest.Server
	tokenFile, caFile string
	cluster           []byte
}

func exampleHub(dir, name string) *exampleHubServer {
	h := &exampleHubServer{}
	h.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(h.cluster)
	}))
	h.tokenFile = filepath.Join(dir, name+"-token")
	h.caFile = filepath.Join(dir, name+"-ca.crt")
	_ = os.WriteFile(h.tokenFile, []byte("token-"+name), 0o600)
	_ = os.WriteFile(h.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.Certificate().Raw}), 0o600)
	return h
}

// declare publishes status.activeController (set before any request).
func (h *exampleHubServer) declare(identity, endpoint string) {
	h.cluster, _ = json.Marshal(map[string]interface{}{
		"apiVersion": "controller.kubeslice.io/v1alpha1", "kind": "Cluster",
		"status": map[string]interface{}{"activeController": map[string]interface{}{
			"endpoint": endpoint, "activeIdentity": identity, "lastUpdated": "2026-08-25T16:42:00Z",
		}},
	})
}
