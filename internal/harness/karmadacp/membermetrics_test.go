package karmadacp

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

func testPod(name string, labels map[string]string, containers ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "x"})
	}
	return p
}

// TestMemberMetricsStandIn runs the stand-in on loopback with its own
// certificates: PodMetrics for the Pods that exist (one per container, the
// stand-in usage), 404 for one that does not, lists filtered by the Pods'
// labels, and nothing for a caller that is not the aggregator.
func TestMemberMetricsStandIn(t *testing.T) {
	m, err := NewMemberMetrics(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pods := fake.NewClientset(testPod("a", map[string]string{"app": "x"}, "main", "sidecar"), testPod("b", map[string]string{"app": "y"}, "main"))
	port, err := m.serve(pods.CoreV1())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if _, err := m.serve(pods.CoreV1()); err == nil {
		t.Error("a second serve did not fail")
	}

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(m.pki.caCert)
	proxyCert, err := tls.LoadX509KeyPair(m.pki.frontProxyCertFile(), m.pki.frontProxyKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	client := func(certs ...tls.Certificate) *http.Client {
		// The name the member's aggregator checks.
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs, ServerName: "metrics-server.kube-system.svc", MinVersion: tls.VersionTLS12}}}
	}
	aggregator := client(proxyCert)
	get := func(c *http.Client, path string, user bool) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", port, path), nil)
		if err != nil {
			t.Fatal(err)
		}
		if user {
			req.Header.Set("X-Remote-User", "system:serviceaccount:karmada-cluster:karmada-member1")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}

	code, body := get(aggregator, "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/a", true)
	if code != http.StatusOK {
		t.Fatalf("GET PodMetrics default/a: %d %s", code, body)
	}
	var pm metricsv1beta1.PodMetrics
	if err := json.Unmarshal(body, &pm); err != nil {
		t.Fatal(err)
	}
	if pm.Kind != "PodMetrics" || pm.Name != "a" || pm.Labels["app"] != "x" || len(pm.Containers) != 2 {
		t.Errorf("PodMetrics %+v", pm)
	}
	usage := StandInUsage()
	for _, c := range pm.Containers {
		if !c.Usage.Cpu().Equal(*usage.Cpu()) || !c.Usage.Memory().Equal(*usage.Memory()) {
			t.Errorf("container %s usage %v, want %v", c.Name, c.Usage, StandInUsage())
		}
	}

	if code, body := get(aggregator, "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/gone", true); code != http.StatusNotFound {
		t.Errorf("GET PodMetrics of a missing Pod: %d %s", code, body)
	}

	code, body = get(aggregator, "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dy", true)
	var list metricsv1beta1.PodMetricsList
	if err := json.Unmarshal(body, &list); err != nil || code != http.StatusOK {
		t.Fatalf("LIST PodMetrics app=y: %d %s %v", code, body, err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "b" {
		t.Errorf("LIST app=y: %+v, want b only", list.Items)
	}
	if code, _ := get(aggregator, "/apis/metrics.k8s.io/v1beta1/pods", true); code != http.StatusOK {
		t.Errorf("LIST in every namespace: %d", code)
	}
	if code, _ := get(aggregator, "/apis/metrics.k8s.io/v1beta1", true); code != http.StatusOK {
		t.Errorf("discovery: %d", code)
	}
	if got := m.Served(); got != 4 {
		t.Errorf("Served() = %d, want 4 (a, b, then a and b)", got)
	}

	if code, _ := get(client(), "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/a", true); code != http.StatusUnauthorized {
		t.Errorf("no client certificate: %d, want 401", code)
	}
	if code, _ := get(aggregator, "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/a", false); code != http.StatusUnauthorized {
		t.Errorf("no X-Remote-User: %d, want 401", code)
	}
	// A certificate of another CA fails the handshake or is not verified.
	other, err := NewMemberMetrics(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	otherCert, err := tls.LoadX509KeyPair(other.pki.frontProxyCertFile(), other.pki.frontProxyKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/apis/metrics.k8s.io/v1beta1/pods", port), nil)
	req.Header.Set("X-Remote-User", "someone")
	if resp, err := client(otherCert).Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("a front-proxy certificate of another CA: %s, want a failed handshake", resp.Status)
	}
}

func TestMemberMetricsFlags(t *testing.T) {
	m, err := NewMemberMetrics(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	flags := m.APIServerFlags()
	want := "--proxy-client-cert-file=" + m.pki.frontProxyCertFile()
	found := false
	for _, f := range flags {
		found = found || f == want
	}
	if !found {
		t.Errorf("flags %v lack %s", flags, want)
	}
	if _, err := os.Stat(m.pki.frontProxyCertFile()); err != nil {
		t.Error(err)
	}
}
