package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// fieldManager owns the fields ApplyYAML sets (server-side apply).
const fieldManager = "holdfast-e2e"

// applyPoll is how often ApplyYAML re-checks a CRD's Established condition
// and discovery: CRDs become established within a second or so.
const applyPoll = 100 * time.Millisecond

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ApplyYAML creates or updates every object in a multi-document YAML (or
// JSON) stream with server-side apply, as `kubectl apply --server-side
// --force-conflicts` would. CustomResourceDefinitions and Namespaces are
// applied first and each CRD is waited on until Established and served, so
// a stream may hold CRDs and objects of their kinds in any order. A
// namespaced object without a namespace goes to "default"; a missing
// namespace is created. Errors name the document and object.
func (c *Cluster) ApplyYAML(ctx context.Context, docs []byte) error {
	objs, err := decodeObjects(docs)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", c.name, err)
	}
	var first, rest []*unstructured.Unstructured
	for _, o := range objs {
		if isCRD(o) || o.GroupVersionKind() == corev1.SchemeGroupVersion.WithKind("Namespace") {
			first = append(first, o)
		} else {
			rest = append(rest, o)
		}
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.kube.Discovery()))
	a := &applier{c: c, mapper: mapper, namespaces: map[string]bool{}, defined: map[schema.GroupKind]bool{}}
	for _, o := range first {
		if err := a.apply(ctx, o); err != nil {
			return err
		}
	}
	for _, o := range first {
		if isCRD(o) {
			if err := c.waitEstablished(ctx, o.GetName()); err != nil {
				return err
			}
			group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			a.defined[schema.GroupKind{Group: group, Kind: kind}] = true
		}
	}
	mapper.Reset()
	for _, o := range rest {
		if err := a.apply(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// ApplyFiles applies each file with ApplyYAML, in order.
func (c *Cluster) ApplyFiles(ctx context.Context, paths ...string) error {
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("cluster %s: %w", c.name, err)
		}
		if err := c.ApplyYAML(ctx, data); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

func isCRD(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == crdGVR.Group && gvk.Kind == "CustomResourceDefinition"
}

// decodeObjects splits a YAML or JSON stream into objects, skipping empty
// documents and flattening List kinds.
func decodeObjects(docs []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(docs), 4096)
	var out []*unstructured.Unstructured
	for i := 1; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, fmt.Errorf("document %d (name %q): apiVersion and kind are required", i, u.GetName())
		}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", i, err)
			}
			for j := range list.Items {
				out = append(out, &list.Items[j])
			}
			continue
		}
		out = append(out, u)
	}
}

type applier struct {
	c          *Cluster
	mapper     *restmapper.DeferredDiscoveryRESTMapper
	namespaces map[string]bool // known to exist
	// defined are the kinds of the CRDs in the stream, which discovery may
	// not list yet.
	defined map[schema.GroupKind]bool
}

func (a *applier) apply(ctx context.Context, o *unstructured.Unstructured) error {
	gvk := o.GroupVersionKind()
	what := fmt.Sprintf("cluster %s: %s %q", a.c.name, gvk.Kind, o.GetName())
	mapping, err := a.mapping(ctx, gvk)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	res := a.c.dynamic.Resource(mapping.Resource)
	var client interface {
		Patch(ctx context.Context, name string, pt types.PatchType, data []byte, options metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error)
	} = res
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := o.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
			o.SetNamespace(ns)
		}
		if err := a.ensureNamespace(ctx, ns); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		client = res.Namespace(ns)
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	force := true
	if _, err := client.Patch(ctx, o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager, Force: &force}); err != nil {
		return fmt.Errorf("%s: apply: %w", what, err)
	}
	return nil
}

// discoveryTimeout bounds the wait for a just-established CRD's kind to
// appear in discovery, which lags Established by a moment.
const discoveryTimeout = 30 * time.Second

// mapping finds the resource of gvk. For the kind of a CRD in the same
// stream it re-reads discovery until the kind appears; any other unknown
// kind is an error at once.
func (a *applier) mapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if !a.defined[gvk.GroupKind()] {
		m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("kind not served (is its CRD applied?): %w", err)
		}
		return m, err
	}
	var mapping *meta.RESTMapping
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, applyPoll, discoveryTimeout, true, func(context.Context) (bool, error) {
		m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil {
			mapping = m
			return true, nil
		}
		if !meta.IsNoMatchError(err) {
			return false, err
		}
		lastErr = err
		a.mapper.Reset()
		return false, nil
	})
	if err != nil && lastErr != nil {
		return nil, fmt.Errorf("CRD established but its kind not in discovery: %w", lastErr)
	}
	return mapping, err
}

func (a *applier) ensureNamespace(ctx context.Context, ns string) error {
	if a.namespaces[ns] {
		return nil
	}
	_, err := a.c.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	a.namespaces[ns] = true
	return nil
}

// waitEstablished waits until the CRD is Established (its storage and
// handlers are ready) and not refusing names (NamesAccepted).
func (c *Cluster) waitEstablished(ctx context.Context, name string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, applyPoll, time.Minute, true, func(ctx context.Context) (bool, error) {
		crd, err := c.dynamic.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		established := false
		for _, raw := range conds {
			cond, _ := raw.(map[string]any)
			typ, _ := cond["type"].(string)
			status, _ := cond["status"].(string)
			switch {
			case typ == "Established" && status == "True":
				established = true
			case typ == "NamesAccepted" && status == "False":
				msg, _ := cond["message"].(string)
				return false, fmt.Errorf("names not accepted: %s", msg)
			}
		}
		last = "not Established yet"
		return established, nil
	})
	if err != nil {
		return fmt.Errorf("cluster %s: CustomResourceDefinition %s: %w (last: %s)", c.name, name, err, last)
	}
	return nil
}
