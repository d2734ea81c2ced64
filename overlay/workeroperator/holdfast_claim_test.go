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

// Tests of pkg/holdfastclaim (patch 0005-keep-active-controller-claim), kept
// beside the glue so `holdfast test` runs them with package main.

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	hubv1alpha1 "github.com/kubeslice/apis/pkg/controller/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeslice/worker-operator/pkg/holdfastclaim"
	"github.com/kubeslice/worker-operator/third_party/holdfast/hubfollow"
	"github.com/kubeslice/worker-operator/third_party/holdfast/hubfollow/hubfollowtest"
)

// claimHub is a hub API server holding one Cluster as JSON, with the status
// subresource semantics that matter here: a status PUT replaces the whole
// status, keeps the rest, and is refused with 409 unless it carries the
// stored resourceVersion.
type claimHub struct {
	mu       sync.Mutex
	cluster  map[string]interface{}
	version  int
	requests []string // "METHOD path" of every request, in order
}

func newClaimHub(t *testing.T, status map[string]interface{}) (*claimHub, *rest.Config) {
	t.Helper()
	h := &claimHub{version: 1, cluster: hubfollowtest.Cluster(testProjectNamespace, testClusterName, status)}
	h.cluster["metadata"].(map[string]interface{})["resourceVersion"] = "1"
	h.cluster["spec"] = map[string]interface{}{"clusterProperty": map[string]interface{}{}}
	srv := httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(srv.Close)
	return h, &rest.Config{Host: srv.URL}
}

func (h *claimHub) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests = append(h.requests, r.Method+" "+r.URL.Path)
	switch {
	case r.URL.Path == "/api":
		_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
	case r.URL.Path == "/apis":
		_, _ = w.Write([]byte(`{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"controller.kubeslice.io",` +
			`"versions":[{"groupVersion":"controller.kubeslice.io/v1alpha1","version":"v1alpha1"}],` +
			`"preferredVersion":{"groupVersion":"controller.kubeslice.io/v1alpha1","version":"v1alpha1"}}]}`))
	case r.URL.Path == "/apis/controller.kubeslice.io/v1alpha1":
		_, _ = w.Write([]byte(`{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"controller.kubeslice.io/v1alpha1",` +
			`"resources":[{"name":"clusters","singularName":"cluster","namespaced":true,"kind":"Cluster","verbs":["get","update"]},` +
			`{"name":"clusters/status","singularName":"","namespaced":true,"kind":"Cluster","verbs":["get","update"]}]}`))
	case r.URL.Path == testClusterPath() && r.Method == http.MethodGet:
		_ = json.NewEncoder(w).Encode(h.cluster)
	case r.URL.Path == testClusterPath()+"/status" && r.Method == http.MethodPut:
		var sent map[string]interface{}
		if err := json.NewDecoder(r.Body).Decode(&sent); err != nil {
			hubfollowtest.WriteStatus(w, http.StatusBadRequest, "BadRequest")
			return
		}
		meta, _ := sent["metadata"].(map[string]interface{})
		if meta["resourceVersion"] != strconv.Itoa(h.version) {
			hubfollowtest.WriteStatus(w, http.StatusConflict, "Conflict")
			return
		}
		h.cluster["status"] = sent["status"]
		h.bump()
		_ = json.NewEncoder(w).Encode(h.cluster)
	default:
		hubfollowtest.WriteStatus(w, http.StatusNotFound, "NotFound")
	}
}

func (h *claimHub) bump() {
	h.version++
	h.cluster["metadata"].(map[string]interface{})["resourceVersion"] = strconv.Itoa(h.version)
}

// publish is a hub controller writing a new claim, as it does between the
// worker's read and its update.
func (h *claimHub) publish(claim map[string]interface{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cluster["status"].(map[string]interface{})["activeController"] = claim
	h.bump()
}

func (h *claimHub) requestLog() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.requests...)
}

func (h *claimHub) status() map[string]interface{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, _ := json.Marshal(h.cluster["status"])
	var out map[string]interface{}
	_ = json.Unmarshal(b, &out)
	return out
}

func claimOf(identity string) map[string]interface{} {
	return hubfollowtest.Claim{Identity: identity, Endpoint: "https://" + identity + ".example:6443", LastUpdated: testClaimTime}.StatusField()
}

func TestStatusUpdateOfClusterKeepsTheClaim(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := hubv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		newClient client.NewClientFunc
		initial   map[string]interface{} // status on the hub
		// publishedMeanwhile is a claim a hub controller writes after the
		// worker read its Cluster and before it updates the status.
		publishedMeanwhile map[string]interface{}
		wantConflict       bool
		wantStatus         map[string]interface{}
	}{{
		name:      "claim survives, every other status field is replaced",
		newClient: holdfastclaim.NewClaimKeepingClient,
		initial:   map[string]interface{}{"activeController": claimOf("hub-a"), "nodeIPs": []interface{}{"192.0.2.1"}, "secretName": "old"},
		wantStatus: map[string]interface{}{
			"activeController": claimOf("hub-a"), "nodeIPs": []interface{}{"192.0.2.10"}, "registrationStatus": "Registered",
		},
	}, {
		name:       "no claim on the hub: v1.6.4's update",
		newClient:  holdfastclaim.NewClaimKeepingClient,
		initial:    map[string]interface{}{"secretName": "old"},
		wantStatus: map[string]interface{}{"nodeIPs": []interface{}{"192.0.2.10"}, "registrationStatus": "Registered"},
	}, {
		name:               "a claim published after the read is a conflict, not overwritten",
		newClient:          holdfastclaim.NewClaimKeepingClient,
		initial:            map[string]interface{}{"activeController": claimOf("hub-a")},
		publishedMeanwhile: claimOf("hub-b"),
		wantConflict:       true,
		wantStatus:         map[string]interface{}{"activeController": claimOf("hub-b")},
	}, {
		// The defect, shown with the plain client: the test can tell.
		name:       "client.New erases the claim (v1.6.4)",
		newClient:  client.New,
		initial:    map[string]interface{}{"activeController": claimOf("hub-a"), "secretName": "old"},
		wantStatus: map[string]interface{}{"nodeIPs": []interface{}{"192.0.2.10"}, "registrationStatus": "Registered"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hub, config := newClaimHub(t, tc.initial)
			c, err := tc.newClient(config, client.Options{Scheme: scheme})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			cr := &hubv1alpha1.Cluster{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: testProjectNamespace, Name: testClusterName}, cr); err != nil {
				t.Fatal(err)
			}
			if tc.publishedMeanwhile != nil {
				hub.publish(tc.publishedMeanwhile)
			}
			// What the cluster reconciler does: replace fields of the status it read.
			cr.Status.NodeIPs = []string{"192.0.2.10"}
			cr.Status.SecretName = ""
			cr.Status.RegistrationStatus = hubv1alpha1.RegistrationStatusRegistered
			read := cr.ResourceVersion
			err = c.Status().Update(ctx, cr)
			if tc.wantConflict {
				if !apierrors.IsConflict(err) {
					t.Fatalf("Status().Update: %v, want a Conflict", err)
				}
			} else {
				if err != nil {
					t.Fatalf("Status().Update: %v", err)
				}
				if cr.ResourceVersion == read || !reflect.DeepEqual(cr.Status.NodeIPs, []string{"192.0.2.10"}) {
					t.Errorf("the typed Cluster was not given the server's answer: resourceVersion %q (read %q), nodeIPs %v",
						cr.ResourceVersion, read, cr.Status.NodeIPs)
				}
			}
			if got := hub.status(); !reflect.DeepEqual(got, tc.wantStatus) {
				t.Errorf("status on the hub:\n got %v\nwant %v", got, tc.wantStatus)
			}
		})
	}
}

// The wrapper leaves every other object to client.New's client: a status
// Update of another kind reaches the hub as sent.
func TestStatusUpdateOfOtherKindsIsUntouched(t *testing.T) {
	var paths []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/controller.kubeslice.io/v1alpha1":
			_, _ = w.Write([]byte(`{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"controller.kubeslice.io/v1alpha1",` +
				`"resources":[{"name":"projects","singularName":"project","namespaced":true,"kind":"Project","verbs":["update"]}]}`))
		case "/apis":
			_, _ = w.Write([]byte(`{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"controller.kubeslice.io",` +
				`"versions":[{"groupVersion":"controller.kubeslice.io/v1alpha1","version":"v1alpha1"}],` +
				`"preferredVersion":{"groupVersion":"controller.kubeslice.io/v1alpha1","version":"v1alpha1"}}]}`))
		case "/api":
			_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
		default:
			var body map[string]interface{}
			_ = json.NewDecoder(r.Body).Decode(&body)
			_ = json.NewEncoder(w).Encode(body)
		}
	}))
	t.Cleanup(srv.Close)
	scheme := runtime.NewScheme()
	if err := hubv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := holdfastclaim.NewClaimKeepingClient(&rest.Config{Host: srv.URL}, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	p := &hubv1alpha1.Project{}
	p.Name, p.Namespace, p.ResourceVersion = "acme", testProjectNamespace, "7"
	if err := c.Status().Update(context.Background(), p); err != nil {
		t.Fatalf("Status().Update: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range paths {
		if strings.HasPrefix(p, "GET /apis/controller.kubeslice.io/v1alpha1/") {
			t.Errorf("a Project status update read the hub first (%s); only a Cluster's keeps the claim", p)
		}
	}
}

// reconcileOnce is what the cluster reconciler does to its Cluster on the
// hub once: read it, replace fields of its status, update the status.
func reconcileOnce(t *testing.T, newClient client.NewClientFunc, config *rest.Config) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := hubv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := newClient(config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cr := &hubv1alpha1.Cluster{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: testProjectNamespace, Name: testClusterName}, cr); err != nil {
		t.Fatal(err)
	}
	cr.Status.NodeIPs = []string{"192.0.2.10"}
	cr.Status.RegistrationStatus = hubv1alpha1.RegistrationStatusRegistered
	if err := c.Status().Update(ctx, cr); err != nil {
		t.Fatalf("Status().Update: %v", err)
	}
}

// followingEnv sets the environment of a worker that follows hub failover
// (on) or of one configured as for v1.6.4 (off: HUB_SECONDARY_HOST_ENDPOINT
// empty, the Standby's files may still be mounted).
func followingEnv(t *testing.T, on bool) {
	secondary := ""
	if on {
		secondary = "https://hub-b.example:6443"
	}
	for k, v := range map[string]string{
		hubfollow.EnvPrimaryEndpoint: "https://hub-a.example:6443", hubfollow.EnvSecondaryEndpoint: secondary,
		hubfollow.EnvClusterName: testClusterName, hubfollow.EnvProjectNamespace: testProjectNamespace,
	} {
		t.Setenv(k, v)
	}
}

// TestNotFollowingIsClientNew: with hub failover following off (no
// secondary hub), the hub clients are client.New's, so a non-HA worker sends
// its hubs exactly v1.6.4's requests: the same requests, in the same order,
// for a reconcile's read and status update of its Cluster, and no read of
// the Cluster from the API server before the update. (It also erases a claim
// as v1.6.4 does; only a following worker reads claims.)
func TestNotFollowingIsClientNew(t *testing.T) {
	followingEnv(t, false)
	initial := map[string]interface{}{"activeController": claimOf("hub-a")}
	upstream, upstreamConfig := newClaimHub(t, initial)
	reconcileOnce(t, client.New, upstreamConfig)
	holdfast, holdfastConfig := newClaimHub(t, initial)
	reconcileOnce(t, holdfastclaim.NewClient, holdfastConfig)

	want, got := upstream.requestLog(), holdfast.requestLog()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with following off the hub got other requests than from client.New:\n got %q\nwant %q", got, want)
	}
	if !reflect.DeepEqual(holdfast.status(), upstream.status()) {
		t.Errorf("status on the hub: got %v, client.New leaves %v", holdfast.status(), upstream.status())
	}
}

// TestFollowingKeepsTheClaim: with following on, NewClient keeps the claim
// through the status update (the stale-standby-claim e2e scenario's fix).
func TestFollowingKeepsTheClaim(t *testing.T) {
	followingEnv(t, true)
	hub, config := newClaimHub(t, map[string]interface{}{"activeController": claimOf("hub-a")})
	reconcileOnce(t, holdfastclaim.NewClient, config)
	want := map[string]interface{}{
		"activeController": claimOf("hub-a"), "nodeIPs": []interface{}{"192.0.2.10"}, "registrationStatus": "Registered",
	}
	if got := hub.status(); !reflect.DeepEqual(got, want) {
		t.Errorf("status on the hub:\n got %v\nwant %v", got, want)
	}
}
