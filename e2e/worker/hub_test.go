//go:build e2e

package worker

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/holdfast-dist/holdfast/pkg/hubfollow/hubfollowtest"
)

var clusterResource = schema.GroupVersionResource{Group: "controller.kubeslice.io", Version: "v1alpha1", Resource: "clusters"}

// clusters is the worker's Cluster on h, read and written as the hub's
// admin (the test plays the hub controllers).
func (h *hub) clusters() dynamic.ResourceInterface {
	return h.cp.Dynamic().Resource(clusterResource).Namespace(projectNamespace)
}

// updateStatus changes the worker's Cluster status on h through the status
// subresource, as the hub controllers do, retrying on a conflict with the
// worker's own status writes.
func (h *hub) updateStatus(ctx context.Context, change func(obj *unstructured.Unstructured) error) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := h.clusters().Get(ctx, clusterName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := change(obj); err != nil {
			return err
		}
		_, err = h.clusters().UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("hub %s: updating the status of Cluster %s/%s: %w", h.name, projectNamespace, clusterName, err)
	}
	return nil
}

// publish writes c as h's status.activeController, or removes the field
// when c is nil. The rest of the status is left as it is.
func (h *hub) publish(ctx context.Context, c *hubfollowtest.Claim) error {
	return h.updateStatus(ctx, func(obj *unstructured.Unstructured) error {
		if c == nil {
			unstructured.RemoveNestedField(obj.Object, "status", "activeController")
			return nil
		}
		return unstructured.SetNestedField(obj.Object, c.StatusField(), "status", "activeController")
	})
}

// resetStatus empties the worker's Cluster status on h, so that a scenario
// starts with nothing published and nothing written by an earlier worker.
func (h *hub) resetStatus(ctx context.Context) error {
	return h.updateStatus(ctx, func(obj *unstructured.Unstructured) error {
		unstructured.RemoveNestedField(obj.Object, "status")
		return nil
	})
}

// removeFinalizers clears metadata.finalizers of the worker's Cluster on h.
// The first worker to reconcile it adds its deregistration finalizer (one
// update of the Cluster); clearing it lets every worker of a comparison
// start from the same object.
func (h *hub) removeFinalizers(ctx context.Context) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := h.clusters().Get(ctx, clusterName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(obj.GetFinalizers()) == 0 {
			return nil
		}
		obj.SetFinalizers(nil)
		_, err = h.clusters().Update(ctx, obj, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("hub %s: removing the finalizers of Cluster %s/%s: %w", h.name, projectNamespace, clusterName, err)
	}
	return nil
}

// published returns h's status.activeController identity, "" if none.
func (h *hub) published(ctx context.Context) (string, error) {
	obj, err := h.clusters().Get(ctx, clusterName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("hub %s: reading Cluster %s/%s: %w", h.name, projectNamespace, clusterName, err)
	}
	id, _, _ := unstructured.NestedString(obj.Object, "status", "activeController", "activeIdentity")
	return id, nil
}

// reconciledByWorker reports whether a worker connected to h has reconciled
// its Cluster there: the worker's cluster reconciler, which runs only in the
// hub manager and only against the hub the worker connected to, copies the
// worker Node's address into status.nodeIPs and marks it Registered.
func (h *hub) reconciledByWorker(ctx context.Context) (bool, error) {
	obj, err := h.clusters().Get(ctx, clusterName, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("hub %s: reading Cluster %s/%s: %w", h.name, projectNamespace, clusterName, err)
	}
	ips, _, _ := unstructured.NestedStringSlice(obj.Object, "status", "nodeIPs")
	registered, _, _ := unstructured.NestedString(obj.Object, "status", "registrationStatus")
	return len(ips) == 1 && ips[0] == nodeIP && registered == "Registered", nil
}

// nodeIPs is h's status.nodeIPs of the worker's Cluster.
func (h *hub) nodeIPs(ctx context.Context) ([]string, error) {
	obj, err := h.clusters().Get(ctx, clusterName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("hub %s: reading Cluster %s/%s: %w", h.name, projectNamespace, clusterName, err)
	}
	ips, _, _ := unstructured.NestedStringSlice(obj.Object, "status", "nodeIPs")
	return ips, nil
}

// workerRequests returns the requests the worker process sent to h, as h's
// audit log recorded them.
func (h *hub) workerRequests() ([]auditEvent, error) {
	events, err := readAuditLog(h.auditLog)
	if err != nil {
		return nil, fmt.Errorf("hub %s: %w", h.name, err)
	}
	return sentBy(events, workerAgent), nil
}

// claim is the declaration h publishes while it leads.
func (h *hub) claim() hubfollowtest.Claim {
	return hubfollowtest.Claim{Identity: h.name, Endpoint: h.access.Endpoint, CABundle: h.cp.CAData(), LastUpdated: time.Now()}
}

// publishOnBoth writes c on both hubs, as an Active and a Standby mirroring
// its declaration would, and returns when both hold it. hub-b is written
// first: it is the copy a worker connected to hub-a reads unchanged (see
// the "erases the claim" note in the failover scenario: v1.6.4 does).
func (e *environment) publishOnBoth(ctx context.Context, c hubfollowtest.Claim) (time.Time, error) {
	for _, h := range []*hub{e.hubB, e.hubA} {
		if err := h.publish(ctx, &c); err != nil {
			return time.Time{}, err
		}
	}
	return time.Now(), nil
}

// resetHubs empties the worker's Cluster status on both hubs.
func (e *environment) resetHubs(ctx context.Context) error {
	for _, h := range []*hub{e.hubA, e.hubB} {
		if err := h.resetStatus(ctx); err != nil {
			return err
		}
	}
	return nil
}
