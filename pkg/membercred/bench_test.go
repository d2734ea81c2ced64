package membercred

import (
	"net/http"
	"testing"
	"time"

	"golang.org/x/oauth2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

const benchToken = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImJlbmNoIn0.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a2FybWFkYS1jbHVzdGVyOm1lbWJlcjEifQ.c2lnbmF0dXJl"

// cannedTransport answers every request with the same 200, so a benchmark
// measures only the wrappers in front of it.
type cannedTransport struct{ resp *http.Response }

func (c cannedTransport) RoundTrip(*http.Request) (*http.Response, error) { return c.resp, nil }

// periodTokenSource is what upstream Karmada's fix feeds client-go's cache:
// a token valid for the 5-minute period.
type periodTokenSource struct{}

func (periodTokenSource) Token() (*oauth2.Token, error) {
	return &oauth2.Token{AccessToken: benchToken, Expiry: time.Now().Add(DefaultRefreshPeriod)}, nil
}

// BenchmarkAuthRoundTrip compares the per-request cost of putting a bearer
// token on a request: (a) client-go's static rest.Config.BearerToken path,
// (b) upstream Karmada's fix (client-go NewCachedTokenSource +
// ResettableTokenSourceWrapTransport), (c) this package. Run them together:
// go test -run '^$' -bench . -benchmem -count 5 ./pkg/membercred/
func BenchmarkAuthRoundTrip(b *testing.B) {
	inner := cannedTransport{resp: &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}}

	static, err := rest.HTTPWrappersForConfig(&rest.Config{BearerToken: benchToken}, inner)
	if err != nil {
		b.Fatal(err)
	}
	cached := transport.ResettableTokenSourceWrapTransport(transport.NewCachedTokenSource(periodTokenSource{}))(inner)
	src, err := NewSecretTokenSource(SecretTokenSourceOptions{
		Cluster: "member1", Namespace: "karmada-cluster", Name: "member1", InitialToken: benchToken,
		Getter: func(string, string) (*corev1.Secret, error) {
			return &corev1.Secret{Data: map[string][]byte{SecretTokenKey: []byte(benchToken)}}, nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	ours := src.WrapTransport(inner)

	// The headers client-go puts on a typical request; cloning them is part
	// of every variant's cost.
	req, err := http.NewRequest(http.MethodGet, "https://member1.example:6443/api/v1/pods?watch=true", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, */*")
	req.Header.Set("User-Agent", "karmada-controller-manager/v1.18.2 (linux/amd64) kubernetes/abcdef0")

	for _, bc := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"a=client-go-static-bearer", static},
		{"b=client-go-cached-token-source", cached},
		{"c=membercred", ours},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := bc.rt.RoundTrip(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("RoundTrip: %v", err)
				}
			}
		})
	}
}
