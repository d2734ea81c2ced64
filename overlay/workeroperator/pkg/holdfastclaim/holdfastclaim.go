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

package holdfastclaim

import (
	"context"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kubeslice/worker-operator/third_party/holdfast/hubfollow"
)

// clusterKind is the object whose status carries the claim.
var clusterKind = schema.GroupKind{Group: "controller.kubeslice.io", Kind: "Cluster"}

// claimPath is where the hub controllers publish which hub leads; the
// worker never writes it, it only must not erase it.
var claimPath = []string{"status", "activeController"}

// NewClient is a client.NewClientFunc (manager.Options.NewClient), used for
// both hub clients. A worker that does not follow hub failover
// (HUB_SECONDARY_HOST_ENDPOINT unset, or a secondary the follower turns off,
// as hubfollow.Config.Enabled decides) gets client.New's client itself, so
// it sends its hubs exactly v1.6.4's requests. A following worker gets
// NewClaimKeepingClient's, which costs one uncached GET per status update of
// its Cluster.
//
// The decision is the follower's own, read from the same environment, rather
// than a flag main's glue sets: it cannot depend on which runs first.
func NewClient(config *rest.Config, options client.Options) (client.Client, error) {
	// Discard: the follower's glue already logs any invalid setting once,
	// and stops the worker on an error before any hub client is built.
	if cfg, err := hubfollow.ConfigFromEnv(os.LookupEnv, logr.Discard()); err != nil || !cfg.Enabled() {
		return client.New(config, options)
	}
	return NewClaimKeepingClient(config, options)
}

// NewClaimKeepingClient is a client.NewClientFunc: the client client.New
// builds, except that a status Update of a controller.kubeslice.io Cluster
// keeps status.activeController as the API server holds it. Everything else,
// including every other object's status Update, goes to client.New's client
// unchanged.
func NewClaimKeepingClient(config *rest.Config, options client.Options) (client.Client, error) {
	c, err := client.New(config, options)
	if err != nil {
		return nil, err
	}
	// The claim must be read from the API server, not from the manager's
	// cache: a cached copy may predate the claim, and carrying an older claim
	// forward would be the same erasure one step later.
	uncached := options
	uncached.Cache = nil
	live, err := client.New(config, uncached)
	if err != nil {
		return nil, err
	}
	return &claimKeepingClient{Client: c, live: live}, nil
}

type claimKeepingClient struct {
	client.Client
	live client.Reader
}

// Status is the only writer the cluster reconciler, its deregistration and
// hubclient use for the Cluster's status; SubResource("status") is left as
// client.New builds it (nothing in v1.6.4 calls it for a Cluster).
func (c *claimKeepingClient) Status() client.SubResourceWriter {
	return &claimKeepingStatusWriter{SubResourceWriter: c.Client.Status(), scheme: c.Scheme(), live: c.live}
}

type claimKeepingStatusWriter struct {
	client.SubResourceWriter
	scheme *runtime.Scheme
	live   client.Reader
}

// Update replaces the status as client.New's Update does, but carries the
// live status.activeController into the request.
//
// Optimistic concurrency is unchanged: the request carries obj's
// resourceVersion, so a claim written after obj was read (the live read
// included) makes the API server answer 409 Conflict, which is returned as
// it is and which the callers already retry (they re-read and update again,
// this time carrying the newer claim). A claim is therefore never written
// back older than the server holds it at that resourceVersion.
func (w *claimKeepingStatusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	gvk, err := apiutil.GVKForObject(obj, w.scheme)
	if err != nil || gvk.GroupKind() != clusterKind {
		return w.SubResourceWriter.Update(ctx, obj, opts...)
	}
	if _, ok := obj.(runtime.Unstructured); ok {
		// An unstructured Cluster carries activeController itself.
		return w.SubResourceWriter.Update(ctx, obj, opts...)
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	if err := w.live.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return err
	}
	claim, found, err := unstructured.NestedFieldNoCopy(live.Object, claimPath...)
	if err != nil || !found {
		// Nothing to keep (no hub publishes a claim): v1.6.4's request. A
		// claim published since obj was read has a newer resourceVersion
		// than obj (every caller updates what it read), so this request
		// fails with 409 rather than erasing it.
		return w.SubResourceWriter.Update(ctx, obj, opts...)
	}
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("status update of Cluster %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	desired := &unstructured.Unstructured{Object: fields}
	desired.SetGroupVersionKind(gvk)
	if desired.GetResourceVersion() == "" {
		// An unconditional update would write the claim read above over a
		// newer one; pinning it to the version read makes that a 409 instead.
		desired.SetResourceVersion(live.GetResourceVersion())
	}
	if err := unstructured.SetNestedField(desired.Object, claim, claimPath...); err != nil {
		return fmt.Errorf("status update of Cluster %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	if err := w.SubResourceWriter.Update(ctx, desired, opts...); err != nil {
		return err
	}
	// Hand the caller the server's answer as client.New's Update does
	// (new resourceVersion, defaulted fields); the typed Cluster has no
	// field for the claim and drops it.
	return runtime.DefaultUnstructuredConverter.FromUnstructured(desired.Object, obj)
}
