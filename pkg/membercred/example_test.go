package membercred_test

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/holdfast-dist/holdfast/pkg/membercred"
)

// Building a member cluster's rest.Config the way Karmada's
// BuildClusterConfig will: the token comes from the wrapper, not from
// cfg.BearerToken. Here the token read at build time has since been revoked
// and the Secret holds its successor; the request still succeeds.
func ExampleSecretTokenSource_WrapTransport() {
	member := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer rotated" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer member.Close()

	// Karmada's getter reads the cluster Secret (from the informer cache).
	getSecret := func(namespace, name string) (*corev1.Secret, error) {
		return &corev1.Secret{Data: map[string][]byte{membercred.SecretTokenKey: []byte("rotated")}}, nil
	}
	src, err := membercred.NewSecretTokenSource(membercred.SecretTokenSourceOptions{
		Cluster:      "member1",
		Namespace:    "karmada-cluster",
		Name:         "member1",
		Getter:       getSecret,
		InitialToken: "revoked", // what BuildClusterConfig read from the Secret
	})
	if err != nil {
		panic(err)
	}

	cfg := &rest.Config{
		Host:            member.URL,
		TLSClientConfig: rest.TLSClientConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: member.Certificate().Raw})},
	}
	// After any proxy-header wrapper, so that one still sees *http.Transport.
	cfg.Wrap(src.WrapTransport)

	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		panic(err)
	}
	resp, err := hc.Get(member.URL + "/api")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, src.Health().Err())
	// Output: 200 <nil>
}

// Installing the guard on the process's own API server config, reporting
// through a readiness check instead of exiting.
func ExampleOwnCredentialGuard_InstallOnOwnConfig() {
	// In a real process: cfg, err := rest.InClusterConfig() (or
	// controller-runtime's ctrl.GetConfig()), which sets BearerTokenFile.
	cfg := &rest.Config{
		Host:            "https://10.96.0.1:443",
		BearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
	}
	guard, err := membercred.NewOwnCredentialGuard(membercred.OwnCredentialGuardOptions{
		Action: membercred.GuardActionUnhealthy, // default: GuardActionExit
	})
	if err != nil {
		panic(err)
	}
	if err := guard.InstallOnOwnConfig(cfg); err != nil {
		panic(err)
	}
	// With controller-runtime: mgr.AddReadyzCheck("own-credential", guard.Checker())
	fmt.Println("ready:", guard.Checker()(nil) == nil)
	// Output: ready: true
}

// The guard refuses a member cluster's config: one member's bad Secret must
// never stop the whole process.
func ExampleOwnCredentialGuard_InstallOnOwnConfig_memberConfigRefused() {
	src, _ := membercred.NewSecretTokenSource(membercred.SecretTokenSourceOptions{
		Cluster: "member1", Namespace: "karmada-cluster", Name: "member1", InitialToken: "t",
		Getter: func(string, string) (*corev1.Secret, error) { return nil, nil },
	})
	memberCfg := &rest.Config{Host: "https://member1:6443"}
	memberCfg.Wrap(src.WrapTransport)

	guard, _ := membercred.NewOwnCredentialGuard(membercred.OwnCredentialGuardOptions{})
	fmt.Println(guard.InstallOnOwnConfig(memberCfg))
	// Output: membercred: refusing to install the own-credential guard on the config for https://member1:6443: it carries a member cluster token wrapper, and a member's 401s must never stop this process
}

// Options parsed from flags or environment are validated before use.
func ExampleOwnCredentialGuardOptions_Validate() {
	action, err := membercred.ParseGuardAction("unhealthy")
	if err != nil {
		panic(err)
	}
	opts := membercred.OwnCredentialGuardOptions{Threshold: -1, Window: time.Minute, Action: action}
	fmt.Println(opts.Validate())
	// Output: Threshold must be at least 1 (0 for the default 5), got -1
}

// The CA half of the same Secret: after BuildClusterConfig has set the TLS
// and proxy settings from the Secret and the Cluster, TrustSecretCABundle
// makes new connections verify against the caBundle the source reads from
// the Secret with the token, instead of the CAData frozen into cfg.
func ExampleSecretTokenSource_TrustSecretCABundle() {
	member := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer member.Close()
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: member.Certificate().Raw})

	getSecret := func(namespace, name string) (*corev1.Secret, error) {
		return &corev1.Secret{Data: map[string][]byte{
			membercred.SecretTokenKey:    []byte("token"),
			membercred.SecretCABundleKey: caBundle,
		}}, nil
	}
	src, err := membercred.NewSecretTokenSource(membercred.SecretTokenSourceOptions{
		Cluster: "member1", Namespace: "karmada-cluster", Name: "member1",
		Getter: getSecret, InitialToken: "token",
	})
	if err != nil {
		panic(err)
	}
	cfg := &rest.Config{Host: member.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caBundle}}
	cfg.Wrap(src.WrapTransport)
	src.TrustSecretCABundle(cfg) // last: its wrapper goes innermost

	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		panic(err)
	}
	resp, err := client.Get(member.URL)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status, src.Health().TracksCABundle)
	// Output: 200 OK true
}
