package karmadacp

import (
	"context"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// karmada-metrics-adapter as upstream deploys it: the Deployment's flags
// (artifacts/deploy/karmada-metrics-adapter.yaml) and the APIServices
// deploy-karmada.sh installs for it.
const (
	metricsAdapterAPIServiceFile = "artifacts/deploy/karmada-metrics-adapter-apiservice.yaml"
	metricsAdapterServiceName    = "karmada-metrics-adapter"
)

// PodMetricsGVR is metrics.k8s.io/v1beta1 pods (PodMetrics), which
// karmada-metrics-adapter serves through karmada-apiserver and a member's
// metrics server (or MemberMetrics) through the member's kube-apiserver.
var PodMetricsGVR = schema.GroupVersionResource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods"}

// startMetricsAdapter runs karmada-metrics-adapter, registers it with the
// tree's APIServices and waits until PodMetrics are listed through
// karmada-apiserver. Its /metrics is plain HTTP on --metrics-bind-address
// (legacyregistry, membercred's counters included in the patched build),
// with no authentication, as upstream serves it.
func (cp *ControlPlane) startMetricsAdapter(ctx context.Context, kubeconfig string) error {
	cert, key, err := cp.pki.servingCert(SystemNamespace, metricsAdapterServiceName, time.Now())
	if err != nil {
		return fmt.Errorf("%s: serving certificate: %w", MetricsAdapter, err)
	}
	return cp.start(ctx, component{
		name:  MetricsAdapter,
		ports: 2,
		args: func(ports []int) ([]string, error) {
			return metricsAdapterArgs(kubeconfig, cert, key, ports[0], ports[1], cp.opts.Verbosity), nil
		},
		ready: func(ports []int) check { return cp.httpsCheck(fmt.Sprintf("https://%s/readyz", hostPort(ports[0]))) },
		after: func(ctx context.Context, ports []int) error {
			objs, err := MetricsAdapterAPIServices(cp.opts.Tree, cp.pki.caCert, ports[0])
			if err != nil {
				return err
			}
			if err := applyObjects(ctx, cp.API, objs); err != nil {
				return fmt.Errorf("registering the APIServices: %w", err)
			}
			return waitPodMetricsAPI(ctx, cp.API, cp.opts.StartTimeout, "v1beta1.metrics.k8s.io")
		},
		metrics: 1,
	})
}

// metricsAdapterArgs are karmada-metrics-adapter's flags: upstream's
// Deployment, every listener on 127.0.0.1, less --client-ca-file. Upstream
// points that at the server CA for clients presenting a certificate
// directly; here every request comes through karmada-apiserver's
// aggregator, authenticated by the front-proxy certificate whose CA the
// adapter reads from kube-system/extension-apiserver-authentication (its
// --authentication-kubeconfig), and nothing else calls it. Logs are JSON
// (--logging-format=json), as upstream runs it.
func metricsAdapterArgs(kubeconfig, certFile, keyFile string, port, metricsPort, verbosity int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--metrics-bind-address=" + hostPort(metricsPort),
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--tls-cert-file=" + certFile,
		"--tls-private-key-file=" + keyFile,
		"--audit-log-path=-",
		"--audit-log-maxage=0",
		"--audit-log-maxbackup=0",
		"--tls-min-version=VersionTLS13",
		"--bind-address=" + loopback,
		"--secure-port=" + strconv.Itoa(port),
		"--logging-format=json",
		"--v=" + strconv.Itoa(verbosity),
	}
}

// MetricsAdapterAPIServices returns the tree's APIServices for
// karmada-metrics-adapter (metrics.k8s.io and custom.metrics.k8s.io) and
// the Service they name, rendered as AggregatedAPIService renders the
// Cluster API's: caBundle filled, the ExternalName Service pointed at
// localhost and each APIService at port.
func MetricsAdapterAPIServices(tree string, caPEM []byte, port int) ([]*unstructured.Unstructured, error) {
	return apiService(tree, metricsAdapterAPIServiceFile, metricsAdapterServiceName, caPEM, port)
}

// waitPodMetricsAPI waits until listing PodMetrics of the default
// namespace works through c's aggregator: apiService is Available and the
// server behind it authenticates the aggregator's proxy and answers.
func waitPodMetricsAPI(ctx context.Context, c *controlplane.Cluster, timeout time.Duration, apiService string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		_, err := c.Dynamic().Resource(PodMetricsGVR).Namespace(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s is not served through %s: %v; APIService: %s", PodMetricsGVR.GroupVersion(), c.Name(), last, apiServiceAvailable(c, apiService))
		case <-time.After(readyPoll):
		}
	}
}
