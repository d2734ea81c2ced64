package membercred

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	testingclock "k8s.io/utils/clock/testing"
)

// tokenFixture: a server accepting "old", a volume whose kubeconfig holds
// "old" inline with the server's CA.
type tokenFixture struct {
	api *kubeAPI
	ca  *testCA
	vol *kubeconfigVolume
}

func newTokenFixture(t *testing.T) tokenFixture {
	t.Helper()
	ca := newTestCA(t, "member-ca", nil)
	api := newKubeAPI(t, ca.serving(t, leafOpts{}), nil)
	api.accept("old")
	vol := newKubeconfigVolume(t, map[string][]byte{
		"config": kubeconfigFile{server: api.URL, token: "old", ca: ca.pem()}.bytes(t),
	})
	return tokenFixture{api: api, ca: ca, vol: vol}
}

func (f tokenFixture) rotate(t *testing.T, token string) {
	t.Helper()
	f.vol.publish(t, map[string][]byte{"config": kubeconfigFile{server: f.api.URL, token: token, ca: f.ca.pem()}.bytes(t)})
}

// The estimator's member token is rotated in its kubeconfig and the old one
// revoked: the next request gets its 401 hidden by a re-read and a replay.
func TestKubeconfigInlineTokenRotatedAndRevoked(t *testing.T) {
	f := newTokenFixture(t)
	_, cfg := followed(t, f.vol.path(), KubeconfigOptions{})
	c := httpClient(t, cfg)
	if code, err := statusOf(c, f.api.URL); err != nil || code != http.StatusOK {
		t.Fatalf("before rotation: %d %v", code, err)
	}
	f.rotate(t, "new")
	f.api.accept("new")
	if code, err := statusOf(c, f.api.URL); err != nil || code != http.StatusOK {
		t.Fatalf("after rotation and revocation: got %d %v, want 200 (requests: %v)", code, err, f.api.requests())
	}
	want := []string{"token:old", "token:old", "token:new"}
	if got := f.api.requests(); !reflect.DeepEqual(got, want) {
		t.Fatalf("server saw %v, want %v", got, want)
	}
}

// tokenFile: client-go's own file token source re-reads it only after a
// minute; a revocation before that costs every request a 401.
func TestKubeconfigTokenFileRotatedAndRevoked(t *testing.T) {
	ca := newTestCA(t, "member-ca", nil)
	api := newKubeAPI(t, ca.serving(t, leafOpts{}), nil)
	api.accept("old")
	conf := kubeconfigFile{server: api.URL, tokenFile: "token", ca: ca.pem()}.bytes(t)
	vol := newKubeconfigVolume(t, map[string][]byte{"config": conf, "token": []byte("old\n")})
	_, cfg := followed(t, vol.path(), KubeconfigOptions{})
	c := httpClient(t, cfg)
	if code, err := statusOf(c, api.URL); err != nil || code != http.StatusOK {
		t.Fatalf("before rotation: %d %v", code, err)
	}
	vol.publish(t, map[string][]byte{"config": conf, "token": []byte("new\n")})
	api.accept("new")
	if code, err := statusOf(c, api.URL); err != nil || code != http.StatusOK {
		t.Fatalf("after rotation and revocation: got %d %v, want 200 (requests: %v)", code, err, api.requests())
	}
}

// A rotation without revocation is noticed by the stat check (a kubelet
// swapping ..data), not only by a 401.
func TestKubeconfigChangeNoticedWithoutRejection(t *testing.T) {
	f := newTokenFixture(t)
	f.api.accept("old", "new")
	clk := testingclock.NewFakePassiveClock(epoch)
	k, cfg := followed(t, f.vol.path(), KubeconfigOptions{Clock: clk})
	c := httpClient(t, cfg)
	f.rotate(t, "new")
	step(clk, KubeconfigChangeCheckInterval)
	if code, err := statusOf(c, f.api.URL); err != nil || code != http.StatusOK {
		t.Fatalf("GET: %d %v", code, err)
	}
	k.waitIdle()
	if code, err := statusOf(c, f.api.URL); err != nil || code != http.StatusOK {
		t.Fatalf("GET: %d %v", code, err)
	}
	if got := f.api.requests(); got[len(got)-1] != "token:new" {
		t.Fatalf("after the stat check the server saw %v, want the last request with the new token", got)
	}
}

// Without a change on disk the files are read again only after the period.
func TestKubeconfigUnchangedFilesAreNotRead(t *testing.T) {
	f := newTokenFixture(t)
	reg := prometheus.NewRegistry()
	m, err := NewKubeconfigMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	clk := testingclock.NewFakePassiveClock(epoch)
	k, cfg := followed(t, f.vol.path(), KubeconfigOptions{Clock: clk, Metrics: m, Name: "member1"})
	c := httpClient(t, cfg)
	reads := func() float64 { return testutil.ToFloat64(m.reads.WithLabelValues("member1")) }
	for range 3 {
		step(clk, KubeconfigChangeCheckInterval)
		if code, err := statusOf(c, f.api.URL); err != nil || code != http.StatusOK {
			t.Fatalf("GET: %d %v", code, err)
		}
		k.waitIdle()
	}
	if got := reads(); got != 1 {
		t.Fatalf("reads_total = %v after three stat checks of unchanged files, want 1 (the first read)", got)
	}
	step(clk, KubeconfigRereadPeriod)
	if _, err := statusOf(c, f.api.URL); err != nil {
		t.Fatal(err)
	}
	k.waitIdle()
	if got := reads(); got != 2 {
		t.Fatalf("reads_total = %v after the re-read period, want 2", got)
	}
}

// clientCertFixture: a server accepting client certificate CN=agent-1 from
// its client CA, and a volume whose kubeconfig names tls.crt and tls.key
// (files, as karmada-agent's does not, and the estimator's may) or inline data.
func TestKubeconfigClientCertRotatedAndRevoked(t *testing.T) {
	for _, inline := range []bool{false, true} {
		name := "files"
		if inline {
			name = "inline"
		}
		t.Run(name, func(t *testing.T) {
			ca := newTestCA(t, "member-ca", nil)
			clientCA := newTestCA(t, "client-ca", nil)
			api := newKubeAPI(t, ca.serving(t, leafOpts{}), clientCA)
			api.accept("cert:agent-1")
			files := func(cn string) map[string][]byte {
				cert, key := clientCA.client(t, cn)
				if inline {
					return map[string][]byte{"config": kubeconfigFile{server: api.URL, cert: cert, key: key, ca: ca.pem()}.bytes(t)}
				}
				return map[string][]byte{
					"config":  kubeconfigFile{server: api.URL, certFile: "tls.crt", keyFile: "tls.key", ca: ca.pem()}.bytes(t),
					"tls.crt": cert, "tls.key": key,
				}
			}
			vol := newKubeconfigVolume(t, files("agent-1"))
			_, cfg := followed(t, vol.path(), KubeconfigOptions{})
			c := httpClient(t, cfg)
			if code, err := statusOf(c, api.URL); err != nil || code != http.StatusOK {
				t.Fatalf("before rotation: %d %v", code, err)
			}
			vol.publish(t, files("agent-2"))
			api.accept("cert:agent-2")
			if code, err := statusOf(c, api.URL); err != nil || code != http.StatusOK {
				t.Fatalf("after rotation and revocation: got %d %v, want 200 (requests: %v)", code, err, api.requests())
			}
			if got := api.requests(); got[len(got)-1] != "cert:agent-2" {
				t.Fatalf("server saw %v, want the last request with the new certificate", got)
			}
			// The server sees the close asynchronously (it failed make
			// compat's run once when read at once).
			waitFor(t, "the server to see the connection opened with the withdrawn certificate closed", func() bool { return api.closed.Load() > 0 })
		})
	}
}

// The member API server's CA is renewed: the file's new CA is taken on the
// first handshake that fails verification.
func TestKubeconfigCARotated(t *testing.T) {
	for _, inline := range []bool{true, false} {
		name := "file"
		if inline {
			name = "inline"
		}
		t.Run(name, func(t *testing.T) {
			oldCA, newCA := newTestCA(t, "old-ca", nil), newTestCA(t, "new-ca", nil)
			api := newKubeAPI(t, oldCA.serving(t, leafOpts{}), nil)
			api.accept("tok")
			files := func(ca *testCA) map[string][]byte {
				if inline {
					return map[string][]byte{"config": kubeconfigFile{server: api.URL, token: "tok", ca: ca.pem()}.bytes(t)}
				}
				return map[string][]byte{"config": kubeconfigFile{server: api.URL, token: "tok", caFile: "ca.crt"}.bytes(t), "ca.crt": ca.pem()}
			}
			vol := newKubeconfigVolume(t, files(oldCA))
			_, cfg := followed(t, vol.path(), KubeconfigOptions{})
			c := httpClient(t, cfg)
			if code, err := statusOf(c, api.URL); err != nil || code != http.StatusOK {
				t.Fatalf("before rotation: %d %v", code, err)
			}
			vol.publish(t, files(newCA))
			api.restartWith(newCA.serving(t, leafOpts{}))
			if code, err := statusOf(c, api.URL); err != nil || code != http.StatusOK {
				t.Fatalf("after the CA rotation: got %d %v, want 200", code, err)
			}
		})
	}
}

// Hostname checks stay: a server certificate from the right CA for another
// name is refused, before and after a re-read.
func TestKubeconfigHostnameStillChecked(t *testing.T) {
	ca := newTestCA(t, "member-ca", nil)
	api := newKubeAPI(t, ca.serving(t, leafOpts{dnsNames: []string{"other.example"}}), nil)
	api.accept("tok")
	vol := newKubeconfigVolume(t, map[string][]byte{"config": kubeconfigFile{server: api.URL, token: "tok", ca: ca.pem()}.bytes(t)})
	_, cfg := followed(t, vol.path(), KubeconfigOptions{})
	c := httpClient(t, cfg)
	_, err := statusOf(c, api.URL)
	if err == nil || !isVerificationError(err) {
		t.Fatalf("GET with a certificate for another name: got %v, want a verification error", err)
	}
}

// A bad file keeps the last good credential, says so once in the log, in
// Health and on the usable gauge, and says when it is good again.
func TestKubeconfigBadFileKeepsLastGood(t *testing.T) {
	f := newTokenFixture(t)
	reg := prometheus.NewRegistry()
	m, err := NewKubeconfigMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var logs logLines
	clk := testingclock.NewFakePassiveClock(epoch)
	k, cfg := followed(t, f.vol.path(), KubeconfigOptions{Clock: clk, Metrics: m, Name: "member1", Logger: logs.logger()})
	c := httpClient(t, cfg)
	bad := [][]byte{
		[]byte("apiVersion: v1\nkind: Config\nusers: [\n"),
		kubeconfigFile{server: f.api.URL, token: "bad\x01token", ca: f.ca.pem()}.bytes(t),
	}
	for i, raw := range bad {
		f.vol.publish(t, map[string][]byte{"config": raw})
		for range 2 {
			step(clk, KubeconfigChangeCheckInterval)
			if code, err := statusOf(c, f.api.URL); err != nil || code != http.StatusOK {
				t.Fatalf("bad file %d: GET %d %v, want 200 with the last good token", i, code, err)
			}
			k.waitIdle()
		}
		h := k.Health()
		if h.LastErrorReason == "" || h.Err() == nil {
			t.Fatalf("bad file %d: Health %+v says nothing is wrong", i, h)
		}
		if got := testutil.ToFloat64(m.usable.WithLabelValues("member1")); got != 0 {
			t.Fatalf("bad file %d: usable = %v, want 0", i, got)
		}
	}
	if got := k.Health().LastErrorReason; got != ReasonInvalidToken {
		t.Fatalf("LastErrorReason = %q, want %q", got, ReasonInvalidToken)
	}
	if got := logs.containing("keeping the last good credential"); len(got) != 2 {
		t.Fatalf("%d log lines about the bad files, want one per reason (2): %q", len(got), got)
	}
	for _, line := range logs.all() {
		if strings.Contains(line, "bad\x01token") || strings.Contains(line, `bad\u0001token`) || strings.Contains(line, "old") && strings.Contains(line, "token:") {
			t.Fatalf("a log line quotes a credential: %q", line)
		}
	}
	f.rotate(t, "old")
	step(clk, KubeconfigChangeCheckInterval)
	_, _ = statusOf(c, f.api.URL)
	k.waitIdle()
	if h := k.Health(); h.Err() != nil {
		t.Fatalf("after the file was fixed: %v", h.Err())
	}
	if got := testutil.ToFloat64(m.usable.WithLabelValues("member1")); got != 1 {
		t.Fatalf("usable = %v after the fix, want 1", got)
	}
	if got := logs.containing("usable credential again"); len(got) != 1 {
		t.Fatalf("%d 'again' lines, want 1: %q", len(got), logs.all())
	}
}

// A file whose token the server rejects: the 401 is returned, once
// counted as persisted, the storm costs one read (single flight and the
// forced-read floor), and one log line.
func TestKubeconfigPersisted401SingleFlight(t *testing.T) {
	f := newTokenFixture(t)
	f.api.accept() // revoked, and the file still holds it
	reg := prometheus.NewRegistry()
	m, err := NewKubeconfigMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var logs logLines
	clk := testingclock.NewFakePassiveClock(epoch)
	k, cfg := followed(t, f.vol.path(), KubeconfigOptions{Clock: clk, Metrics: m, Name: "member1", Logger: logs.logger()})
	c := httpClient(t, cfg)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, err := statusOf(c, f.api.URL); err != nil || code != http.StatusUnauthorized {
				t.Errorf("GET: %d %v, want 401", code, err)
			}
		}()
	}
	wg.Wait()
	if got := testutil.ToFloat64(m.reads.WithLabelValues("member1")); got != 2 {
		t.Fatalf("reads_total = %v after a storm of 8 401s within MinForcedRefreshInterval, want 2 (the first read and one forced)", got)
	}
	if h := k.Health(); h.ConsecutivePersisted401s != 8 {
		t.Fatalf("ConsecutivePersisted401s = %d, want 8", h.ConsecutivePersisted401s)
	}
	if got := logs.containing("rejects the credential"); len(got) != 1 {
		t.Fatalf("%d log lines about the rejected credential, want 1", len(got))
	}
	f.api.accept("old")
	if code, _ := statusOf(c, f.api.URL); code != http.StatusOK {
		t.Fatalf("after the server accepts the token again: %d", code)
	}
	if h := k.Health(); h.Err() != nil {
		t.Fatalf("Health after an accepted request: %v", h.Err())
	}
}

// A request whose body cannot be produced again is not replayed: its 401 is
// returned, and the next request carries the new token.
func TestKubeconfigUnreplayableRequestGetsItsUnauthorized(t *testing.T) {
	f := newTokenFixture(t)
	_, cfg := followed(t, f.vol.path(), KubeconfigOptions{})
	c := httpClient(t, cfg)
	f.rotate(t, "new")
	f.api.accept("new")
	req, err := http.NewRequest(http.MethodPost, f.api.URL, io.NopCloser(strings.NewReader("{}")))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unreplayable POST: %d, want its 401", resp.StatusCode)
	}
	if code, err := statusOf(c, f.api.URL); err != nil || code != http.StatusOK {
		t.Fatalf("next request: %d %v, want 200 with the new token", code, err)
	}
	want := []string{"token:old", "token:new"}
	if got := f.api.requests(); !reflect.DeepEqual(got, want) {
		t.Fatalf("server saw %v, want %v (one send of the POST, no replay)", got, want)
	}
}

// A CA that withdraws a certificate closes the connections it verified.
func TestKubeconfigWithdrawnCAClosesConnections(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old-ca", nil), newTestCA(t, "new-ca", nil)
	api := newKubeAPI(t, oldCA.serving(t, leafOpts{}), nil)
	api.accept("tok")
	conf := func(ca []byte) map[string][]byte {
		return map[string][]byte{"config": kubeconfigFile{server: api.URL, token: "tok", ca: ca}.bytes(t)}
	}
	vol := newKubeconfigVolume(t, conf(bundle(oldCA, newCA)))
	clk := testingclock.NewFakePassiveClock(epoch)
	k, cfg := followed(t, vol.path(), KubeconfigOptions{Clock: clk})
	c := httpClient(t, cfg)
	if code, err := statusOf(c, api.URL); err != nil || code != http.StatusOK {
		t.Fatalf("GET: %d %v", code, err)
	}
	vol.publish(t, conf(newCA.pem()))
	step(clk, KubeconfigChangeCheckInterval)
	_, _ = statusOf(c, api.URL)
	k.waitIdle()
	if k.Health().Err() != nil {
		t.Fatal(k.Health().Err())
	}
	// The server sees the close asynchronously; a request on a new
	// connection proves the old one is not reused.
	before := api.accepted.Load()
	api.restartWith(newCA.serving(t, leafOpts{}))
	if code, err := statusOf(c, api.URL); err != nil || code != http.StatusOK {
		t.Fatalf("GET after the CA withdrew the old one: %d %v", code, err)
	}
	if api.accepted.Load() == before {
		t.Fatal("no new connection after the CA withdrew the one the old connection was verified by")
	}
}

// With a file that never changes, the config is clientcmd's, but for the
// token moving from BearerToken to the wrapper; a bad file gives clientcmd's
// error, word for word.
func TestRestConfigFromKubeconfigIsBuildConfigFromFlags(t *testing.T) {
	ca := newTestCA(t, "member-ca", nil)
	clientCA := newTestCA(t, "client-ca", nil)
	cert, key := clientCA.client(t, "agent-1")
	cases := map[string]kubeconfigFile{
		"token":     {server: "https://127.0.0.1:6443", token: "tok", ca: ca.pem()},
		"tokenFile": {server: "https://127.0.0.1:6443", tokenFile: "token", caFile: "ca.crt"},
		"certFiles": {server: "https://member.example:6443", certFile: "tls.crt", keyFile: "tls.key", caFile: "ca.crt"},
		"certData":  {server: "https://member.example:6443", cert: cert, key: key, ca: ca.pem()},
		"insecure":  {server: "https://127.0.0.1:6443", token: "tok", insecure: true},
		"exec":      {server: "https://127.0.0.1:6443", exec: true, ca: ca.pem()},
	}
	for name, kc := range cases {
		t.Run(name, func(t *testing.T) {
			vol := newKubeconfigVolume(t, map[string][]byte{
				"config": kc.bytes(t), "token": []byte("tok"), "ca.crt": ca.pem(), "tls.crt": cert, "tls.key": key,
			})
			want, err := clientcmd.BuildConfigFromFlags("", vol.path())
			if err != nil {
				t.Fatal(err)
			}
			got, err := RestConfigFromKubeconfig(vol.path(), KubeconfigOptions{Logger: discardLogger()})
			if err != nil {
				t.Fatal(err)
			}
			if name == "exec" {
				if got.WrapTransport != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("an exec kubeconfig was changed:\n got %+v\nwant %+v", got, want)
				}
				return
			}
			if got.WrapTransport == nil {
				t.Fatal("no wrapper installed")
			}
			got.WrapTransport = nil
			want.BearerToken, want.BearerTokenFile = "", ""
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("configs differ beyond the token:\n got %+v\nwant %+v", got, want)
			}
		})
	}

	dir := t.TempDir()
	bad := map[string][]byte{
		"missing":       nil,
		"not yaml":      []byte("users: [\n"),
		"no server":     kubeconfigFile{token: "tok"}.bytes(t),
		"no token file": kubeconfigFile{server: "https://127.0.0.1:6443", tokenFile: filepath.Join(dir, "absent")}.bytes(t),
	}
	for name, raw := range bad {
		t.Run("error/"+name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			if raw != nil {
				if err := os.WriteFile(path, raw, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, want := clientcmd.BuildConfigFromFlags("", path)
			_, got := RestConfigFromKubeconfig(path, KubeconfigOptions{Logger: discardLogger()})
			if want == nil || got == nil || got.Error() != want.Error() {
				t.Fatalf("error %v, want clientcmd's %v", got, want)
			}
		})
	}
}

// Every config built for one path shares one credential.
func TestRestConfigFromKubeconfigSharesOneCredential(t *testing.T) {
	f := newTokenFixture(t)
	a, err := RestConfigFromKubeconfig(f.vol.path(), KubeconfigOptions{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := RestConfigFromKubeconfig(f.vol.path(), KubeconfigOptions{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ka := a.WrapTransport(&http.Transport{}).(*kubeconfigRoundTripper).cred
	kb := b.WrapTransport(&http.Transport{}).(*kubeconfigRoundTripper).cred
	if ka != kb {
		t.Fatal("two configs of one kubeconfig got two credentials")
	}
}

// The server ends the handshake with an alert (it no longer trusts the
// client certificate): the files are read at once, and the next request
// carries the certificate they hold now.
func TestKubeconfigTLSAlertRereadsAtOnce(t *testing.T) {
	ca := newTestCA(t, "member-ca", nil)
	oldClientCA, newClientCA := newTestCA(t, "old-client-ca", nil), newTestCA(t, "new-client-ca", nil)
	oldCert, oldKey := oldClientCA.client(t, "agent-1")
	api := newKubeAPI(t, ca.serving(t, leafOpts{}), newClientCA)
	api.accept("cert:agent-1")
	vol := newKubeconfigVolume(t, map[string][]byte{"config": kubeconfigFile{server: api.URL, cert: oldCert, key: oldKey, ca: ca.pem()}.bytes(t)})
	clk := testingclock.NewFakePassiveClock(epoch)
	k, cfg := followed(t, vol.path(), KubeconfigOptions{Clock: clk})
	c := httpClient(t, cfg)
	newCert, newKey := newClientCA.client(t, "agent-1")
	vol.publish(t, map[string][]byte{"config": kubeconfigFile{server: api.URL, cert: newCert, key: newKey, ca: ca.pem()}.bytes(t)})
	if _, err := statusOf(c, api.URL); err == nil || !tlsRejected(err) {
		t.Fatalf("GET with a certificate the server no longer trusts: %v, want a TLS alert", err)
	}
	k.waitIdle()
	if code, err := statusOf(c, api.URL); err != nil || code != http.StatusOK {
		t.Fatalf("GET after the alert: %d %v, want 200 with the certificate the file holds now", code, err)
	}
}

// karmada-agent's --karmada-context (upstream's artifacts/agent manifest
// passes one) names a context other than the file's current-context: the
// credential followed is that context's, read anew on every change, and
// the config is what clientcmd builds for that context.
func TestKubeconfigExplicitContextIsFollowed(t *testing.T) {
	ca := newTestCA(t, "karmada-ca", nil)
	api := newKubeAPI(t, ca.serving(t, leafOpts{}), nil)
	api.accept("agent-old")
	conf := func(agentToken string) map[string][]byte {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["karmada"] = &clientcmdapi.Cluster{Server: api.URL, CertificateAuthorityData: ca.pem()}
		cfg.Clusters["elsewhere"] = &clientcmdapi.Cluster{Server: "https://198.51.100.1:6443", CertificateAuthorityData: ca.pem()}
		cfg.AuthInfos["agent"] = &clientcmdapi.AuthInfo{Token: agentToken}
		cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "admin-token"}
		cfg.Contexts["karmada-apiserver"] = &clientcmdapi.Context{Cluster: "karmada", AuthInfo: "agent"}
		cfg.Contexts["admin"] = &clientcmdapi.Context{Cluster: "elsewhere", AuthInfo: "admin"}
		cfg.CurrentContext = "admin"
		raw, err := clientcmd.Write(*cfg)
		if err != nil {
			t.Fatal(err)
		}
		return map[string][]byte{"config": raw}
	}
	vol := newKubeconfigVolume(t, conf("agent-old"))
	cfg, err := RestConfigFromKubeconfig(vol.path(), KubeconfigOptions{Context: "karmada-apiserver", Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != api.URL {
		t.Fatalf("host %s, want the named context's %s", cfg.Host, api.URL)
	}
	c := httpClient(t, cfg)
	if code, err := statusOf(c, api.URL); err != nil || code != http.StatusOK {
		t.Fatalf("before rotation: %d %v (server saw %v)", code, err, api.requests())
	}
	vol.publish(t, conf("agent-new"))
	api.accept("agent-new")
	if code, err := statusOf(c, api.URL); err != nil || code != http.StatusOK {
		t.Fatalf("after rotation and revocation: %d %v, want 200 (server saw %v)", code, err, api.requests())
	}
	want := []string{"token:agent-old", "token:agent-old", "token:agent-new"}
	if got := api.requests(); !reflect.DeepEqual(got, want) {
		t.Fatalf("server saw %v, want %v", got, want)
	}
	_, err = RestConfigFromKubeconfig(vol.path(), KubeconfigOptions{Context: "missing", Logger: discardLogger()})
	_, upstream := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: vol.path()},
		&clientcmd.ConfigOverrides{CurrentContext: "missing"}).ClientConfig()
	if err == nil || upstream == nil || err.Error() != upstream.Error() {
		t.Fatalf("a context the file lacks: %v, want clientcmd's own error %v", err, upstream)
	}
}
