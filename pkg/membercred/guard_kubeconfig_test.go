package membercred

import (
	"net/http"
	"testing"
)

// karmada-agent installs the own-credential guard on the config
// RestConfigFromKubeconfig builds (patch 0006): the credential is then
// neither BearerToken nor BearerTokenFile but whatever the followed
// kubeconfig puts on the request, a token or a client certificate. The
// guard must count only 401s that persist after the kubeconfig was re-read:
// a rotation the file already holds is no strike, a credential revoked with
// nothing newer in the file trips it.
func TestGuardOnAFollowedKubeconfig(t *testing.T) {
	for _, kind := range []string{"token", "client certificate"} {
		t.Run(kind, func(t *testing.T) {
			ca := newTestCA(t, "karmada-ca", nil)
			clientCA := newTestCA(t, "karmada-client-ca", nil)
			api := newKubeAPI(t, ca.serving(t, leafOpts{}), clientCA)
			conf := func(name string) map[string][]byte {
				f := kubeconfigFile{server: api.URL, ca: ca.pem()}
				if kind == "token" {
					f.token = name
				} else {
					f.cert, f.key = clientCA.client(t, name)
				}
				return map[string][]byte{"config": f.bytes(t)}
			}
			accept := func(name string) {
				if kind == "token" {
					api.accept(name)
				} else {
					api.accept("cert:" + name)
				}
			}
			accept("old")
			vol := newKubeconfigVolume(t, conf("old"))
			_, cfg := followed(t, vol.path(), KubeconfigOptions{})
			g := newGuard(t, OwnCredentialGuardOptions{Threshold: 2, MinDuration: NoGuardMinDuration})
			if err := g.guard.InstallOnOwnConfig(cfg); err != nil {
				t.Fatalf("InstallOnOwnConfig on a followed kubeconfig: %v", err)
			}
			c := httpClient(t, cfg)
			request := func() int {
				t.Helper()
				step(g.clock, 2*guardStrikeSpacing)
				code, err := statusOf(c, api.URL)
				if err != nil {
					t.Fatalf("GET: %v", err)
				}
				return code
			}
			if code := request(); code != http.StatusOK {
				t.Fatalf("before rotation: %d", code)
			}

			// Rotated and the old one revoked: the file holds the new
			// one, so every request succeeds and the guard sees no 401.
			vol.publish(t, conf("new"))
			accept("new")
			for i := 0; i < 4; i++ {
				if code := request(); code != http.StatusOK {
					t.Fatalf("request %d after a rotation the file holds: %d, want 200 (server saw %v)", i, code, api.requests())
				}
			}
			if exits := g.exits.calls(); len(exits) != 0 {
				t.Fatalf("the guard exited %v on a rotation the kubeconfig already held", exits)
			}

			// Revoked with nothing newer: rejected for good.
			accept("")
			for i := 0; i < 4; i++ {
				if code := request(); code != http.StatusUnauthorized {
					t.Fatalf("request %d after revocation: %d, want 401", i, code)
				}
			}
			if exits := g.exits.calls(); len(exits) != 1 || exits[0] != 1 {
				t.Fatalf("after persisting 401s with nothing newer in the kubeconfig: exits %v, want one exit(1)", exits)
			}
		})
	}
}
