package karmadacp

import (
	"context"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// searchAPIServiceFile is what deploy-karmada.sh registers karmada-search
// with.
const searchAPIServiceFile = "artifacts/deploy/karmada-search-apiservice.yaml"

// ResourceRegistryGVR is search.karmada.io/v1alpha1 resourceregistries,
// served by karmada-search through karmada-apiserver.
var ResourceRegistryGVR = schema.GroupVersionResource{Group: "search.karmada.io", Version: "v1alpha1", Resource: "resourceregistries"}

// SearchAPIService returns the tree's APIService for
// search.karmada.io/v1alpha1 and the Service it names, rendered by
// apiService for karmada-search at 127.0.0.1:port.
func SearchAPIService(tree string, caPEM []byte, port int) ([]*unstructured.Unstructured, error) {
	return apiService(tree, searchAPIServiceFile, searchServiceName, caPEM, port)
}

// searchArgs are karmada-search's flags: upstream's Deployment
// (artifacts/deploy/karmada-search.yaml) bound to 127.0.0.1, less
//   - the etcd TLS (etcd listens on loopback in plain HTTP, as for
//     kube-apiserver and the aggregated API server). No --etcd-prefix,
//     as upstream: ResourceRegistries are stored under the default
//     /registry in Karmada's etcd, beside kube-apiserver's objects;
//   - the audit log to stdout (--audit-log-path=-): it would bury the log
//     lines the scenarios quote;
//   - --logging-format=json: klog's text format, as every other
//     component here, which the evidence patterns match.
//
// No feature gate: karmada-search reads none of Karmada's (its gate is
// used only to validate the logging flags), and both its cache
// (/apis/search.karmada.io/v1alpha1/search/cache/...) and its proxy
// (.../proxying/karmada/proxy/...) are on unless --disable-search or
// --disable-proxy is given. (--disable-proxy crashes v1.18.2 at start:
// the search-storage-cache-readiness post-start hook is registered on the
// proxy controller whether or not there is one, and panics on the nil
// one, pkg/search/proxy/controller.go:344.)
func searchArgs(kubeconfig, etcd string, p *pki, port, verbosity int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--etcd-servers=" + etcd,
		"--tls-cert-file=" + p.searchCertFile(),
		"--tls-private-key-file=" + p.searchKeyFile(),
		"--tls-min-version=VersionTLS13",
		"--bind-address=" + loopback,
		"--secure-port=" + strconv.Itoa(port),
		"--v=" + strconv.Itoa(verbosity),
	}
}

// startSearch runs karmada-search as deploy-karmada.sh does, after the
// core components, authenticating as karmada-apiserver's admin (upstream's
// client certificate is in system:masters too), registers it with the
// tree's APIService and waits until search.karmada.io answers through
// karmada-apiserver.
//
// The APIService is registered before the process starts, for the port
// chosen: karmada-search's informers list ResourceRegistries through
// karmada-apiserver, that is through its own APIService, and its /readyz
// fails until they synced. Upstream's Deployment has no readiness probe,
// so deploy-karmada.sh registers the APIService once the pod runs, which
// is the same order.
//
// Its metrics are on its secure port (/metrics), behind the delegated
// authentication and authorization every path but /healthz, /readyz and
// /livez is behind: the URL recorded is https, served with a certificate
// of CAData for 127.0.0.1; a scraper authenticates with the admin's bearer
// token (karmada-search asks karmada-apiserver with a TokenReview; the
// admin, in system:masters, is authorized without a SubjectAccessReview).
func (cp *ControlPlane) startSearch(ctx context.Context, kubeconfig string) error {
	return cp.start(ctx, component{
		name:  Search,
		ports: 1,
		before: func(ctx context.Context, ports []int) error {
			objs, err := SearchAPIService(cp.opts.Tree, cp.pki.caCert, ports[0])
			if err != nil {
				return err
			}
			if err := applyObjects(ctx, cp.API, objs); err != nil {
				return fmt.Errorf("registering the APIService: %w", err)
			}
			return nil
		},
		args: func(ports []int) ([]string, error) {
			return searchArgs(kubeconfig, cp.API.EtcdEndpoint(), cp.pki, ports[0], cp.opts.Verbosity), nil
		},
		ready: func(ports []int) check { return cp.httpsCheck(fmt.Sprintf("https://%s/readyz", hostPort(ports[0]))) },
		after: func(ctx context.Context, ports []int) error {
			cp.mu.Lock()
			cp.urls[Search] = fmt.Sprintf("https://%s/metrics", hostPort(ports[0]))
			cp.mu.Unlock()
			return cp.waitServed(ctx, ResourceRegistryGVR)
		},
		// Recorded by after: start records only plain-HTTP metrics ports.
		metrics: -1,
	})
}
