//go:build e2e

package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/harness/node"
	"github.com/holdfast-dist/holdfast/internal/harness/testpki"
)

var (
	karmadaClusters = schema.GroupVersionResource{Group: "cluster.karmada.io", Version: "v1alpha1", Resource: "clusters"}
	karmadaPolicies = schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"}
	configMaps      = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets         = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// karmadaClient is a client of the deployed karmada-apiserver from the
// host (karmadaConfig).
func karmadaClient(ctx context.Context, n *node.Node) (dynamic.Interface, error) {
	cfg, err := karmadaConfig(ctx, n)
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(cfg)
}

// karmadaConfig is the chart's admin kubeconfig, sent to the apiserver
// pod's address (the host routes the pod network to the node) under the
// Service name its certificate carries.
func karmadaConfig(ctx context.Context, n *node.Node) (*rest.Config, error) {
	s, err := n.Kubernetes().CoreV1().Secrets(karmadaNamespace).Get(ctx, karmadaRelease+"-kubeconfig", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the chart's kubeconfig Secret: %w", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data["kubeconfig"])
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s-kubeconfig: %w", karmadaNamespace, karmadaRelease, err)
	}
	pods, err := n.Kubernetes().CoreV1().Pods(karmadaNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	ip := ""
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, karmadaRelease+"-apiserver-") && p.Status.PodIP != "" {
			ip = p.Status.PodIP
		}
	}
	if ip == "" {
		return nil, fmt.Errorf("no %s-apiserver pod with an address", karmadaRelease)
	}
	host := strings.TrimPrefix(cfg.Host, "https://")
	cfg.TLSClientConfig.ServerName = strings.Split(host, ":")[0]
	cfg.Host = "https://" + ip + ":5443"
	return cfg, nil
}

// karmadaMember is member1 as the flows after the join use it: its
// control plane (with an audit log), and the ServiceAccount whose token
// the Cluster's Secret holds.
type karmadaMember struct {
	api *controlplane.Cluster
	// auditLog is the member kube-apiserver's audit log.
	auditLog       string
	account, token string
	rotations      int
	// certs are the client CAs member1 trusts and the scheduler
	// estimator's certificates (the estimator flow).
	certs *testpki.RevocableClients
}

// testKarmadaMember joins a member control plane (on the node's host
// address) in Push mode and propagates a ConfigMap to it: the deployed
// controller-manager's member informer and client work.
func testKarmadaMember(t, parent *testing.T, n *node.Node) *karmadaMember {
	sc := beginScenario(t, suiteKarmadaNode, "the deployed chart: a member joined in Push mode is Ready and a propagated ConfigMap reaches it",
		"setup: member1 is etcd + kube-apiserver on the node's host address; its cluster-admin ServiceAccount token and CA in a Secret in karmada-cluster, "+
			"Cluster member1 syncMode Push created in the deployed karmada-apiserver (reached at its pod address from the host)")
	ctx := t.Context()
	k, err := karmadaClient(ctx, n)
	if err != nil {
		sc.Fatalf("%v", err)
	}
	km, err := startKarmadaMember(parent, n)
	sc.Check(err)
	member := km.api
	token, err := member.ServiceAccountToken(ctx, "karmada-cluster", "member1", 2*time.Hour)
	sc.Check(err)
	sc.Check(member.BindClusterAdmin(ctx, "karmada-cluster", "member1"))
	km.account, km.token = "member1", token

	begin := time.Now()
	create := func(r schema.GroupVersionResource, ns string, obj map[string]any) {
		u := &unstructured.Unstructured{Object: obj}
		var err error
		if ns == "" {
			_, err = k.Resource(r).Create(ctx, u, metav1.CreateOptions{})
		} else {
			_, err = k.Resource(r).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
		}
		if err != nil {
			sc.Fatalf("creating %s %s in karmada-apiserver: %v", r.Resource, u.GetName(), err)
		}
	}
	// karmada-cluster is the chart's (static resources).
	create(secrets, "karmada-cluster", map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "member1", "namespace": "karmada-cluster"},
		"stringData": map[string]any{"token": token, "caBundle": string(member.CAData())}})
	create(karmadaClusters, "", map[string]any{"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": "member1"},
		"spec": map[string]any{"apiEndpoint": member.Endpoint(), "syncMode": "Push",
			"secretRef": map[string]any{"namespace": "karmada-cluster", "name": "member1"}}})
	sc.Check(waitFor(ctx, "Cluster member1 Ready", func() bool {
		c, err := k.Resource(karmadaClusters).Get(ctx, "member1", metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Ready" && m["status"] == "True" {
				return true
			}
		}
		return false
	}))
	sc.Timing("join-to-ready", time.Since(begin))

	begin = time.Now()
	create(configMaps, "default", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "propagated", "namespace": "default"}, "data": map[string]any{"from": "karmada-node"}})
	create(karmadaPolicies, "default", map[string]any{"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
		"metadata": map[string]any{"name": "propagated", "namespace": "default"},
		"spec": map[string]any{
			"resourceSelectors": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "propagated"}},
			"placement":         map[string]any{"clusterAffinity": map[string]any{"clusterNames": []any{"member1"}}}}})
	sc.Check(waitFor(ctx, "ConfigMap default/propagated on member1", func() bool {
		cm, err := member.Kubernetes().CoreV1().ConfigMaps("default").Get(ctx, "propagated", metav1.GetOptions{})
		return err == nil && cm.Data["from"] == "karmada-node"
	}))
	sc.Timing("policy-to-member", time.Since(begin))
	sc.PassWithTest()
	return km
}

// startKarmadaMember starts member1 (etcd and kube-apiserver with an audit
// log) on the node's host address for t, the test that outlives every flow
// using it.
func startKarmadaMember(t *testing.T, n *node.Node) (*karmadaMember, error) {
	dir := filepath.Join(t.TempDir(), "member1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	auditLog := filepath.Join(dir, "audit.log")
	auditFlags, err := controlplane.AuditFlags(dir, auditLog)
	if err != nil {
		return nil, err
	}
	certs, err := testpki.NewRevocableClients(filepath.Join(dir, "client-ca"), estimatorUser, time.Now())
	if err != nil {
		return nil, err
	}
	flags := append(auditFlags, "--client-ca-file="+certs.Bundle)
	// Two CA switches: the controller-manager's CA rotation and the
	// estimator's.
	api := controlplane.StartForTest(t, controlplane.Options{Name: "member1", Dir: dir, Address: n.HostIP(), ExtraAPIServerFlags: flags, CARotations: 2})
	return &karmadaMember{api: api, auditLog: auditLog, certs: certs}, nil
}
