package karmadacp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// What MemberMetrics registers on the member: the names metrics-server's
// own manifests use.
const (
	memberMetricsNamespace  = metav1.NamespaceSystem
	memberMetricsService    = "metrics-server"
	memberMetricsAPIService = "v1beta1.metrics.k8s.io"
	// standInWindow is the PodMetrics window metrics-server reports for a
	// kubelet's usage (its default resolution).
	standInWindow = 30 * time.Second
)

// StandInUsage is the usage MemberMetrics reports for every container: a
// scenario that reads it back through Karmada knows it came from the
// member's stand-in.
func StandInUsage() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("7m"),
		corev1.ResourceMemory: resource.MustParse("11Mi"),
	}
}

// MemberMetrics is the stand-in for metrics-server on a member cluster,
// which has no kubelet to measure anything: a metrics.k8s.io/v1beta1
// server in the test process on 127.0.0.1, registered on the member's
// kube-apiserver as APIService v1beta1.metrics.k8s.io (Service
// kube-system/metrics-server, ExternalName localhost, as
// AggregatedAPIService reaches the aggregated API server). It serves
// PodMetrics with StandInUsage for each container of the Pods that exist on
// the member, read from the member at each request, and only to the
// member's aggregator: the request must carry the front-proxy client
// certificate and an X-Remote-User header, as metrics-server's delegated
// authentication requires. karmada-metrics-adapter reads PodMetrics from a
// member exactly there: its member dynamic client GETs and LISTs
// metrics.k8s.io pods through the member's kube-apiserver, for the Pods its
// member Pod informer has seen.
type MemberMetrics struct {
	pki      *pki
	cert     tls.Certificate
	clientCA *x509.CertPool
	server   *http.Server
	handler  *podMetricsServer
}

// NewMemberMetrics generates the member's aggregation-layer certificates
// under dir with this package's PKI (newPKI: a serving CA and the
// front-proxy CA and client certificate; its Karmada serving certificates
// go unused) and the stand-in's serving certificate. The member's
// kube-apiserver must run with APIServerFlags.
func NewMemberMetrics(dir string) (*MemberMetrics, error) {
	p, err := newPKI(dir, time.Now())
	if err != nil {
		return nil, fmt.Errorf("member metrics stand-in: certificates: %w", err)
	}
	certFile, keyFile, err := p.servingCert(memberMetricsNamespace, memberMetricsService, time.Now())
	if err != nil {
		return nil, fmt.Errorf("member metrics stand-in: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("member metrics stand-in: %w", err)
	}
	caPEM, err := os.ReadFile(p.frontProxyCAFile())
	if err != nil {
		return nil, fmt.Errorf("member metrics stand-in: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("member metrics stand-in: no certificate in %s", p.frontProxyCAFile())
	}
	return &MemberMetrics{pki: p, cert: cert, clientCA: pool}, nil
}

// APIServerFlags are the aggregation-layer flags the member's
// kube-apiserver needs to proxy metrics.k8s.io to the stand-in (as
// karmada-apiserver's, frontProxyFlags).
func (m *MemberMetrics) APIServerFlags() []string { return frontProxyFlags(m.pki) }

// Start serves the stand-in for member, registers it there and waits until
// PodMetrics are listed through the member's kube-apiserver (within
// timeout). Close stops it.
func (m *MemberMetrics) Start(ctx context.Context, member *controlplane.Cluster, timeout time.Duration) error {
	port, err := m.serve(member.Kubernetes().CoreV1())
	if err != nil {
		return err
	}
	if err := applyObjects(ctx, member, memberMetricsObjects(m.pki.caCert, port)); err != nil {
		return fmt.Errorf("member metrics stand-in: registering APIService %s on %s: %w", memberMetricsAPIService, member.Name(), err)
	}
	if err := waitPodMetricsAPI(ctx, member, timeout, memberMetricsAPIService); err != nil {
		return fmt.Errorf("member metrics stand-in: %w", err)
	}
	return nil
}

// serve starts the server on a free 127.0.0.1 port, answering from pods.
func (m *MemberMetrics) serve(pods corev1client.PodsGetter) (port int, err error) {
	if m.server != nil {
		return 0, errors.New("member metrics stand-in: started twice")
	}
	ln, err := tls.Listen("tcp", net.JoinHostPort(loopback, "0"), &tls.Config{
		Certificates: []tls.Certificate{m.cert},
		// The aggregator presents its front-proxy client certificate;
		// fromAggregator rejects requests without it.
		ClientAuth: tls.VerifyClientCertIfGiven,
		ClientCAs:  m.clientCA,
		MinVersion: tls.VersionTLS12,
	})
	if err != nil {
		return 0, fmt.Errorf("member metrics stand-in: %w", err)
	}
	m.handler = &podMetricsServer{pods: pods, now: time.Now}
	m.server = &http.Server{Handler: m.handler.routes(), ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = m.server.Serve(ln) }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Served is how many PodMetrics the stand-in has returned.
func (m *MemberMetrics) Served() int64 {
	if m.handler == nil {
		return 0
	}
	return m.handler.served.Load()
}

// Close stops the server.
func (m *MemberMetrics) Close() error {
	if m.server == nil {
		return nil
	}
	return m.server.Close()
}

// memberMetricsObjects are the APIService and Service metrics-server's
// manifests install, the Service an ExternalName of localhost and the
// APIService at port with caPEM.
func memberMetricsObjects(caPEM []byte, port int) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		{Object: map[string]any{
			"apiVersion": "v1",
			"kind":       "Service",
			"metadata":   map[string]any{"namespace": memberMetricsNamespace, "name": memberMetricsService},
			"spec":       map[string]any{"type": "ExternalName", "externalName": loopbackName},
		}},
		{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1",
			"kind":       "APIService",
			"metadata":   map[string]any{"name": memberMetricsAPIService},
			"spec": map[string]any{
				"group":                PodMetricsGVR.Group,
				"version":              PodMetricsGVR.Version,
				"groupPriorityMinimum": int64(100),
				"versionPriority":      int64(100),
				"caBundle":             caPEM, // []byte: base64 in JSON, as the API wants
				"service": map[string]any{
					"namespace": memberMetricsNamespace,
					"name":      memberMetricsService,
					"port":      int64(port),
				},
			},
		}},
	}
}

// podMetricsServer answers the metrics.k8s.io/v1beta1 requests a client
// of PodMetrics makes (discovery, get, list in a namespace or all).
type podMetricsServer struct {
	pods   corev1client.PodsGetter
	now    func() time.Time
	served atomic.Int64
}

func (s *podMetricsServer) routes() http.Handler {
	mux := http.NewServeMux()
	base := "/apis/" + PodMetricsGVR.GroupVersion().String()
	mux.HandleFunc("GET "+base, s.discovery)
	mux.HandleFunc("GET "+base+"/pods", s.list)
	mux.HandleFunc("GET "+base+"/namespaces/{namespace}/pods", s.list)
	mux.HandleFunc("GET "+base+"/namespaces/{namespace}/pods/{name}", s.get)
	return fromAggregator(mux)
}

// fromAggregator lets through only requests kube-apiserver's aggregator
// proxied: a verified front-proxy client certificate and the user it
// authenticated in X-Remote-User.
func fromAggregator(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || r.TLS.VerifiedChains[0][0].Subject.CommonName != frontProxyClientName || r.Header.Get("X-Remote-User") == "" {
			writeStatus(w, apierrors.NewUnauthorized("the metrics stand-in answers only the member's aggregator (front-proxy client certificate and X-Remote-User)"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *podMetricsServer) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: PodMetricsGVR.GroupVersion().String(),
		APIResources: []metav1.APIResource{{Name: "pods", Namespaced: true, Kind: "PodMetrics", Verbs: []string{"get", "list"}}},
	})
}

func (s *podMetricsServer) get(w http.ResponseWriter, r *http.Request) {
	pod, err := s.pods.Pods(r.PathValue("namespace")).Get(r.Context(), r.PathValue("name"), metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			// As metrics-server: the PodMetrics, not the Pod, is missing.
			writeStatus(w, apierrors.NewNotFound(PodMetricsGVR.GroupResource(), r.PathValue("name")))
			return
		}
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	pm := podMetrics(pod, s.now())
	s.served.Add(1)
	writeJSON(w, http.StatusOK, &pm)
}

func (s *podMetricsServer) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pods, err := s.pods.Pods(r.PathValue("namespace")).List(r.Context(), metav1.ListOptions{LabelSelector: q.Get("labelSelector"), FieldSelector: q.Get("fieldSelector")})
	if err != nil {
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	out := metricsv1beta1.PodMetricsList{TypeMeta: metav1.TypeMeta{APIVersion: PodMetricsGVR.GroupVersion().String(), Kind: "PodMetricsList"}, Items: []metricsv1beta1.PodMetrics{}}
	now := s.now()
	for i := range pods.Items {
		out.Items = append(out.Items, podMetrics(&pods.Items[i], now))
	}
	s.served.Add(int64(len(out.Items)))
	writeJSON(w, http.StatusOK, &out)
}

// podMetrics is what metrics-server would report for pod if each of its
// containers used StandInUsage: its name, namespace and labels (selectors
// match the Pod's labels), a timestamp of now.
func podMetrics(pod *corev1.Pod, now time.Time) metricsv1beta1.PodMetrics {
	ts := metav1.NewTime(now.Truncate(time.Second))
	pm := metricsv1beta1.PodMetrics{
		TypeMeta:   metav1.TypeMeta{APIVersion: PodMetricsGVR.GroupVersion().String(), Kind: "PodMetrics"},
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, Labels: pod.Labels, CreationTimestamp: ts},
		Timestamp:  ts,
		Window:     metav1.Duration{Duration: standInWindow},
		Containers: []metricsv1beta1.ContainerMetrics{},
	}
	for _, c := range pod.Spec.Containers {
		pm.Containers = append(pm.Containers, metricsv1beta1.ContainerMetrics{Name: c.Name, Usage: StandInUsage()})
	}
	return pm
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.ErrStatus
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	writeJSON(w, int(st.Code), &st)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}
