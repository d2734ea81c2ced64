package karmada

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestControllerManagerArgs(t *testing.T) {
	tests := []struct {
		name    string
		opts    ControllerManagerOptions
		want    []string // present, in any order
		wantErr string
	}{
		{
			name: "defaults",
			opts: ControllerManagerOptions{Kubeconfig: "/k/kubeconfig", MetricsPort: 18080, HealthPort: 18081},
			want: []string{
				"--kubeconfig=/k/kubeconfig", "--controllers=cluster,clusterStatus", "--leader-elect=false",
				"--cluster-status-update-frequency=2s", "--enable-cluster-resource-modeling=true",
				"--metrics-bind-address=127.0.0.1:18080", "--health-probe-bind-address=127.0.0.1:18081", "--v=2",
			},
		},
		{
			name: "overrides and extra flags",
			opts: ControllerManagerOptions{
				Kubeconfig: "/k", MetricsPort: 1, HealthPort: 2, StatusUpdateFrequency: 5 * time.Second, Verbosity: 4,
				Extra: []string{"--own-credential-guard-threshold=2"},
			},
			want: []string{"--cluster-status-update-frequency=5s", "--v=4", "--own-credential-guard-threshold=2"},
		},
		{name: "no kubeconfig", opts: ControllerManagerOptions{MetricsPort: 1, HealthPort: 2}, wantErr: "kubeconfig"},
		{name: "same port twice", opts: ControllerManagerOptions{Kubeconfig: "/k", MetricsPort: 1, HealthPort: 1}, wantErr: "two distinct ports"},
		{name: "no port", opts: ControllerManagerOptions{Kubeconfig: "/k", MetricsPort: 1}, wantErr: "two distinct ports"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.opts.Args()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Args() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("Args() = %v, missing %s", got, w)
				}
			}
			for _, a := range got {
				if strings.Contains(a, "0.0.0.0") || strings.HasPrefix(strings.SplitN(a, "=", 2)[1], ":") {
					t.Errorf("Args() binds beyond 127.0.0.1: %s", a)
				}
			}
			if last := got[len(got)-1]; len(tt.opts.Extra) > 0 && last != tt.opts.Extra[len(tt.opts.Extra)-1] {
				t.Errorf("Args() = %v, want the extra flags last so they win", got)
			}
		})
	}
}
