package membercred

import (
	"net/http"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// BenchmarkKubeconfigRoundTrip compares the per-request cost of the
// kubeconfig's token on a request: (a) clientcmd.BuildConfigFromFlags's
// static config (client-go's bearer wrapper) and (b) RestConfigFromKubeconfig's
// wrapper, each in front of a canned transport. Run them together:
// go test -run '^$' -bench Kubeconfig -benchmem -count 5 ./pkg/membercred/
func BenchmarkKubeconfigRoundTrip(b *testing.B) {
	inner := cannedTransport{resp: &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}}
	vol := newKubeconfigVolume(b, map[string][]byte{"config": kubeconfigFile{server: "https://member1.example:6443", token: benchToken}.bytes(b)})
	static, err := clientcmd.BuildConfigFromFlags("", vol.path())
	if err != nil {
		b.Fatal(err)
	}
	staticRT, err := rest.HTTPWrappersForConfig(static, inner)
	if err != nil {
		b.Fatal(err)
	}
	k, err := NewKubeconfigCredential(vol.path(), KubeconfigOptions{Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	followedCfg := rest.CopyConfig(static)
	k.Install(followedCfg)
	followedRT, err := rest.HTTPWrappersForConfig(followedCfg, inner)
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest(b)
	for _, v := range []authVariant{{"a=clientcmd-static", staticRT}, {"b=kubeconfig-credential", followedRT}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := v.rt.RoundTrip(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("RoundTrip: %v", err)
				}
			}
		})
	}
}

// BenchmarkKubeconfigHandshake compares what a NEW connection costs (dial,
// TLS handshake with a client certificate, one request) with clientcmd's
// static config and with RestConfigFromKubeconfig's, against the same
// local server; idle connections are dropped after every request.
func BenchmarkKubeconfigHandshake(b *testing.B) {
	ca, clientCA := newTestCA(b, "bench-ca", nil), newTestCA(b, "bench-client-ca", nil)
	api := newKubeAPI(b, ca.serving(b, leafOpts{}), clientCA)
	api.accept("cert:agent")
	cert, key := clientCA.client(b, "agent")
	vol := newKubeconfigVolume(b, map[string][]byte{"config": kubeconfigFile{server: api.URL, cert: cert, key: key, ca: ca.pem()}.bytes(b)})
	static, err := clientcmd.BuildConfigFromFlags("", vol.path())
	if err != nil {
		b.Fatal(err)
	}
	k, err := NewKubeconfigCredential(vol.path(), KubeconfigOptions{Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	followedCfg := rest.CopyConfig(static)
	k.Install(followedCfg)
	for _, v := range []struct {
		name string
		cfg  *rest.Config
	}{{"a=clientcmd-static", static}, {"b=kubeconfig-credential", followedCfg}} {
		b.Run(v.name, func(b *testing.B) { benchNewConnections(b, v.cfg, api.URL, &api.accepted) })
	}
}
