package karmadacp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// apiService renders one of the tree's APIService files (an APIService and
// the ExternalName Service it names, as deploy-karmada.sh applies them):
// caPEM as the caBundle, the Service's externalName changed from the
// in-cluster DNS name to localhost and the APIService's port set to the
// server's. Without --enable-aggregator-routing kube-apiserver dials an
// ExternalName Service's name at the APIService's port
// (k8s.io/apiserver/pkg/util/proxy.ResolveCluster), so this reaches a
// server on loopback with no Endpoints (which may not hold 127.0.0.1) and
// no kube-proxy; TLS is still checked against <service>.<namespace>.svc,
// the name pki.go puts in the serving certificate. The file must name
// service (in SystemNamespace), or the certificate would not match.
func apiService(tree, file, service string, caPEM []byte, port int) ([]*unstructured.Unstructured, error) {
	what := "karmada APIService " + file
	data, err := os.ReadFile(filepath.Join(tree, file))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if data, err = render(file, data, caPEM, 0); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	objs, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var apiServices, services int
	for _, o := range objs {
		switch o.GetKind() {
		case "APIService":
			svcName, _, _ := unstructured.NestedString(o.Object, "spec", "service", "name")
			svcNamespace, _, _ := unstructured.NestedString(o.Object, "spec", "service", "namespace")
			if svcName != service || svcNamespace != SystemNamespace {
				return nil, fmt.Errorf("%s: APIService %s names Service %s/%s, not %s/%s", what, o.GetName(), svcNamespace, svcName, SystemNamespace, service)
			}
			if err := unstructured.SetNestedField(o.Object, int64(port), "spec", "service", "port"); err != nil {
				return nil, err
			}
			apiServices++
		case "Service":
			if o.GetName() != service {
				return nil, fmt.Errorf("%s: unexpected Service %s", what, o.GetName())
			}
			typ, _, _ := unstructured.NestedString(o.Object, "spec", "type")
			if typ != "ExternalName" {
				return nil, fmt.Errorf("%s: Service %s is of type %q, not ExternalName", what, o.GetName(), typ)
			}
			if err := unstructured.SetNestedField(o.Object, loopbackName, "spec", "externalName"); err != nil {
				return nil, err
			}
			services++
		default:
			// An object the harness does not know how to point at loopback
			// would be applied as upstream wrote it: refuse instead.
			return nil, fmt.Errorf("%s: unexpected %s %s", what, o.GetKind(), o.GetName())
		}
	}
	if apiServices == 0 || services != 1 {
		return nil, fmt.Errorf("%s: want APIServices and their one Service, got %d APIService(s) and %d Service(s)", what, apiServices, services)
	}
	return objs, nil
}

// waitServed waits until listing gvr through karmada-apiserver works: its
// APIService is Available, the aggregator's proxy authenticates to the
// aggregated server (front-proxy certificate) and that server's delegated
// authentication and authorization answer.
func (cp *ControlPlane) waitServed(ctx context.Context, gvr schema.GroupVersionResource) error {
	ctx, cancel := context.WithTimeout(ctx, cp.opts.StartTimeout)
	defer cancel()
	var last error
	for {
		_, err := cp.API.Dynamic().Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s is not served through karmada-apiserver: %v; APIService: %s", gvr.GroupResource(), last, cp.apiServiceCondition(gvr.GroupVersion()))
		case <-time.After(readyPoll):
		}
	}
}

var apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// apiServiceCondition is the Available condition of gv's APIService on
// karmada-apiserver, for errors.
func (cp *ControlPlane) apiServiceCondition(gv schema.GroupVersion) string {
	return apiServiceAvailable(cp.API, gv.Version+"."+gv.Group)
}

// apiServiceAvailable is APIService name's Available condition, for
// errors.
func apiServiceAvailable(c *controlplane.Cluster, name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	o, err := c.Dynamic().Resource(apiServiceGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, raw := range conds {
		m, _ := raw.(map[string]any)
		if m["type"] == "Available" {
			return fmt.Sprintf("%s Available=%v (%v: %v)", name, m["status"], m["reason"], m["message"])
		}
	}
	return name + " has no Available condition yet"
}
