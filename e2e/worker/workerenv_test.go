package worker

import (
	"strings"
	"testing"
	"time"
)

func TestWorkerSettingsEnv(t *testing.T) {
	base := workerSettings{
		Kubeconfig:       "/w/worker.kubeconfig",
		ClusterName:      "worker-1",
		ProjectNamespace: "kubeslice-acme",
		PodNamespace:     "kubeslice-system",
		Home:             "/w/home",
		Primary:          hubAccess{Endpoint: "https://127.0.0.1:6443", TokenFile: "/w/a.token", CAFile: "/w/a.crt"},
	}
	tests := []struct {
		name   string
		edit   func(*workerSettings)
		want   []string
		absent []string
	}{{
		name: "primary only leaves the feature off and the tuning to the worker",
		edit: func(*workerSettings) {},
		want: []string{
			"CLUSTER_NAME=worker-1", "ENABLE_WEBHOOKS=false", "HOME=/w/home",
			"HUB_CA_FILE=/w/a.crt", "HUB_HOST_ENDPOINT=https://127.0.0.1:6443", "HUB_PROJECT_NAMESPACE=kubeslice-acme",
			"HUB_TOKEN_FILE=/w/a.token", "KUBECONFIG=/w/worker.kubeconfig", "POD_NAMESPACE=kubeslice-system",
		},
		absent: []string{"HUB_SECONDARY_", "HUB_RESOLVE_", "HUB_SWITCH_", "OWN_CREDENTIAL_"},
	}, {
		name: "secondary and tuning",
		edit: func(s *workerSettings) {
			s.Secondary = &hubAccess{Endpoint: "https://127.0.0.1:7443", TokenFile: "/w/b.token", CAFile: "/w/b.crt"}
			s.ResolveInterval, s.ResolveTimeout, s.SwitchConfirmations = time.Second, 500*time.Millisecond, 2
			s.Guard = guardSettings{Action: "unhealthy", Threshold: 3, Window: 30 * time.Second}
		},
		want: []string{
			"HUB_SECONDARY_HOST_ENDPOINT=https://127.0.0.1:7443", "HUB_SECONDARY_TOKEN_FILE=/w/b.token",
			"HUB_SECONDARY_CA_FILE=/w/b.crt", "HUB_RESOLVE_INTERVAL=1s", "HUB_RESOLVE_TIMEOUT=500ms",
			"HUB_SWITCH_CONFIRMATIONS=2", "OWN_CREDENTIAL_GUARD_ACTION=unhealthy", "OWN_CREDENTIAL_GUARD_THRESHOLD=3", "OWN_CREDENTIAL_GUARD_WINDOW=30s",
		},
	}, {
		name: "a mounted Standby credential without its endpoint keeps the feature off",
		edit: func(s *workerSettings) {
			s.Secondary = &hubAccess{TokenFile: "/w/b.token", CAFile: "/w/b.crt"}
		},
		want:   []string{"HUB_SECONDARY_TOKEN_FILE=/w/b.token", "HUB_SECONDARY_CA_FILE=/w/b.crt"},
		absent: []string{"HUB_SECONDARY_HOST_ENDPOINT"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			tc.edit(&s)
			env := s.env()
			joined := "\n" + strings.Join(env, "\n") + "\n"
			for _, w := range tc.want {
				if !strings.Contains(joined, "\n"+w+"\n") {
					t.Errorf("env lacks %s:%s", w, joined)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(joined, "\n"+a) {
					t.Errorf("env sets %s*:%s", a, joined)
				}
			}
			for i := 1; i < len(env); i++ {
				if env[i-1] > env[i] {
					t.Errorf("env is not sorted at %q, %q", env[i-1], env[i])
				}
			}
		})
	}
}
