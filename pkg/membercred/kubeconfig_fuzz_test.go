package membercred

import (
	"path/filepath"
	"strings"
	"testing"
)

// fuzzMarker is the token of the seeds: a decoding error must never quote
// it, whatever the fuzzer did to the document around it.
const fuzzMarker = "fuzzsecret0123456789"

// FuzzParseKubeconfig feeds arbitrary documents to the kubeconfig parser a
// re-read uses (clientcmd.Load and the choice of the current context's
// credential). Beyond "never panics": a refusal carries a known reason and
// a decoding error does not quote the token; an accepted document has a
// server, and every file it names is absolute (resolved against the
// kubeconfig's folder, as clientcmd resolves them).
//
//	go test -run '^$' -fuzz FuzzParseKubeconfig -fuzztime 60s ./pkg/membercred/
func FuzzParseKubeconfig(f *testing.F) {
	ca := newTestCA(f, "fuzz-ca", nil)
	cert, key := ca.client(f, "fuzz")
	for _, kc := range []kubeconfigFile{
		{server: "https://127.0.0.1:6443", token: fuzzMarker, ca: ca.pem()},
		{server: "https://member.example", tokenFile: "token", caFile: "ca.crt"},
		{server: "https://member.example", tokenFile: "/var/run/token", token: fuzzMarker},
		{server: "https://member.example", cert: cert, key: key, ca: ca.pem()},
		{server: "https://member.example", certFile: "tls.crt", keyFile: "../tls.key", insecure: true},
		{server: "https://member.example", exec: true},
		{token: fuzzMarker},
	} {
		f.Add(kc.bytes(f))
	}
	f.Add([]byte(`{"apiVersion":"v1","kind":"Config","current-context":"c","contexts":[{"name":"c","context":{"cluster":"k","user":"u"}}],` +
		`"clusters":[{"name":"k","cluster":{"server":"https://x"}}],"users":[{"name":"u","user":{"token":"` + fuzzMarker + `"}}]}`))
	f.Add([]byte("apiVersion: v1\nkind: Config\ncurrent-context: missing\nusers:\n- name: u\n  user:\n    token: " + fuzzMarker + "\n"))
	f.Add([]byte("users: [\n  token: " + fuzzMarker))
	f.Add([]byte("kind: Config\napiVersion: v2\n"))
	f.Add([]byte(""))

	known := map[string]bool{ReasonKubeconfigInvalid: true}
	dir := filepath.Join(f.TempDir(), "volume")
	f.Fuzz(func(t *testing.T, raw []byte) {
		spec, kerr := parseKubeconfig(raw, dir, "")
		if kerr != nil {
			if spec != nil {
				t.Fatal("a refusal returned a spec")
			}
			if !known[kerr.reason] || kerr.detail == "" {
				t.Fatalf("refusal with reason %q, detail %q", kerr.reason, kerr.detail)
			}
			if strings.HasPrefix(kerr.detail, "does not parse") && strings.Contains(kerr.detail, fuzzMarker) {
				t.Fatalf("a decoding error quotes the token: %q", kerr.detail)
			}
			return
		}
		if spec.server == "" {
			t.Fatal("accepted a context without a server")
		}
		for _, p := range []string{spec.tokenFile, spec.certFile, spec.keyFile, spec.caFile} {
			if p != "" && !filepath.IsAbs(p) {
				t.Fatalf("file %q left relative", p)
			}
		}
		if spec.hasClientCert && !spec.certOrKeyMentioned {
			t.Fatal("a client certificate without certOrKeyMentioned")
		}
	})
}
