package membercred

import (
	"errors"
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
// measures only the wrappers in front of it; a request without the bearer
// header gets an error, so a variant that skips its work fails instead of
// looking fast.
type cannedTransport struct{ resp *http.Response }

var errNoBearer = errors.New("canned transport: request without the Authorization: Bearer header")

func (c cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != benchBearer {
		return nil, errNoBearer
	}
	return c.resp, nil
}

const benchBearer = "Bearer " + benchToken

// periodTokenSource is what upstream Karmada's fix feeds client-go's cache:
// a token valid for the 5-minute period.
type periodTokenSource struct{}

func (periodTokenSource) Token() (*oauth2.Token, error) {
	return &oauth2.Token{AccessToken: benchToken, Expiry: time.Now().Add(DefaultRefreshPeriod)}, nil
}

// BenchmarkAuthRoundTrip compares the per-request cost of putting a bearer
// token on a request (see authVariants). Run them together:
// go test -run '^$' -bench . -benchmem -count 5 ./pkg/membercred/
// Time is compared here only; TestAuthRoundTripAllocations asserts the
// allocation counts, which are deterministic.
func BenchmarkAuthRoundTrip(b *testing.B) {
	req := benchRequest(b)
	for _, bc := range authVariants(b) {
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

type authVariant struct {
	name string
	rt   http.RoundTripper
}

// authVariants returns (a) client-go's static rest.Config.BearerToken
// path, (b) upstream Karmada's fix (client-go NewCachedTokenSource +
// ResettableTokenSourceWrapTransport) and (c) this package, each in front
// of a canned transport.
func authVariants(tb testing.TB) []authVariant {
	tb.Helper()
	inner := cannedTransport{resp: &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}}

	static, err := rest.HTTPWrappersForConfig(&rest.Config{BearerToken: benchToken}, inner)
	if err != nil {
		tb.Fatal(err)
	}
	cached := transport.ResettableTokenSourceWrapTransport(transport.NewCachedTokenSource(periodTokenSource{}))(inner)
	src, err := NewSecretTokenSource(SecretTokenSourceOptions{
		Cluster: "member1", Namespace: "karmada-cluster", Name: "member1", InitialToken: benchToken,
		Getter: func(string, string) (*corev1.Secret, error) {
			return &corev1.Secret{Data: map[string][]byte{SecretTokenKey: []byte(benchToken)}}, nil
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return []authVariant{
		{"a=client-go-static-bearer", static},
		{"b=client-go-cached-token-source", cached},
		{"c=membercred", src.WrapTransport(inner)},
	}
}

// benchRequest carries the headers client-go puts on a typical request;
// cloning them is part of every variant's cost.
func benchRequest(tb testing.TB) *http.Request {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://member1.example:6443/api/v1/pods?watch=true", nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, */*")
	req.Header.Set("User-Agent", "karmada-controller-manager/v1.18.2 (linux/amd64) kubernetes/abcdef0")
	return req
}
