package karmada

import (
	"strings"
	"testing"
)

func TestParseKarmadaVersion(t *testing.T) {
	tests := []struct {
		name, out, want, wantErr string
	}{
		{
			name: "patched build carries holdfast's commit and series",
			out:  `karmada-controller-manager version: version.Info{GitVersion:"v1.18.2-holdfast.2", GitShortCommit:"fb5a8efc9392", GitCommit:"holdfast:fb5a8efc9392,series:9710415113c3", GitTreeState:"clean", BuildDate:"2026-12-02T11:34:34Z", GoVersion:"go1.26.8", Compiler:"gc", Platform:"linux/amd64"}`,
			want: "v1.18.2-holdfast.2 (holdfast:fb5a8efc9392,series:9710415113c3)",
		},
		{
			name: "pristine build has upstream's version only",
			out:  `karmada-controller-manager version: version.Info{GitVersion:"v1.18.2", GitShortCommit:"", GitCommit:"", GitTreeState:"", BuildDate:"", GoVersion:"go1.26.8", Compiler:"gc", Platform:"linux/amd64"}` + "\n",
			want: "v1.18.2",
		},
		{name: "no version", out: "unknown command \"version\"", wantErr: "no GitVersion"},
		{name: "empty version", out: `version.Info{GitVersion:""}`, wantErr: "no GitVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseKarmadaVersion(tt.out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseKarmadaVersion() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseKarmadaVersion() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
