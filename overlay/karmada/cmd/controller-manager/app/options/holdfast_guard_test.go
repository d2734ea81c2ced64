/*
Copyright 2026 The holdfast Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// holdfast glue test, laid into the patched tree only (overlay/karmada): it
// uses the flags patch 0002-own-credential-guard adds, which the pristine
// tree does not have.

package options

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/karmada-io/karmada/third_party/holdfast/membercred"
)

func TestHoldfastOwnCredentialGuardFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    OwnCredentialGuardOptions
		wantErr string // substring of the aggregated Validate error; "" for none
	}{
		{name: "defaults", want: OwnCredentialGuardOptions{Action: "exit", Threshold: 5, Window: 5 * time.Minute, MinDuration: time.Minute}},
		{
			name: "unhealthy",
			args: []string{"--own-credential-guard-action=unhealthy", "--own-credential-guard-threshold=3", "--own-credential-guard-window=90s"},
			want: OwnCredentialGuardOptions{Action: "unhealthy", Threshold: 3, Window: 90 * time.Second, MinDuration: time.Minute},
		},
		{
			name: "off",
			args: []string{"--own-credential-guard-action=off"},
			want: OwnCredentialGuardOptions{Action: "off", Threshold: 5, Window: 5 * time.Minute, MinDuration: time.Minute},
		},
		{
			name:    "unknown action",
			args:    []string{"--own-credential-guard-action=restart"},
			want:    OwnCredentialGuardOptions{Action: "restart", Threshold: 5, Window: 5 * time.Minute, MinDuration: time.Minute},
			wantErr: `--own-credential-guard-action must be "exit", "unhealthy" or "off"`,
		},
		{
			name:    "negative threshold",
			args:    []string{"--own-credential-guard-threshold=-1"},
			want:    OwnCredentialGuardOptions{Action: "exit", Threshold: -1, Window: 5 * time.Minute, MinDuration: time.Minute},
			wantErr: "--own-credential-guard-threshold must be at least 1",
		},
		{
			name: "min duration",
			args: []string{"--own-credential-guard-min-duration=2s"},
			want: OwnCredentialGuardOptions{Action: "exit", Threshold: 5, Window: 5 * time.Minute, MinDuration: 2 * time.Second},
		},
		{
			name: "no min duration",
			args: []string{"--own-credential-guard-threshold=1", "--own-credential-guard-min-duration=none"},
			want: OwnCredentialGuardOptions{Action: "exit", Threshold: 1, Window: 5 * time.Minute, MinDuration: membercred.NoGuardMinDuration},
		},
		{
			name: "zero min duration is the default, as before",
			args: []string{"--own-credential-guard-min-duration=0"},
			want: OwnCredentialGuardOptions{Action: "exit", Threshold: 5, Window: 5 * time.Minute, MinDuration: 0},
		},
		{
			name:    "negative min duration",
			args:    []string{"--own-credential-guard-min-duration=-1s"},
			want:    OwnCredentialGuardOptions{Action: "exit", Threshold: 5, Window: 5 * time.Minute, MinDuration: -time.Second},
			wantErr: "--own-credential-guard-min-duration must be greater than 0",
		},
		{
			name:    "negative window",
			args:    []string{"--own-credential-guard-window=-1m"},
			want:    OwnCredentialGuardOptions{Action: "exit", Threshold: 5, Window: -time.Minute, MinDuration: time.Minute},
			wantErr: "--own-credential-guard-window must be greater than 0",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Through the upstream Options, so the test also proves the
			// patch wired AddFlags and Validate.
			opts := NewOptions()
			fs := pflag.NewFlagSet("karmada-controller-manager", pflag.ContinueOnError)
			opts.AddFlags(fs, nil, nil)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatalf("parsing %q: %v", tc.args, err)
			}
			if opts.OwnCredentialGuard != tc.want {
				t.Errorf("options = %+v, want %+v", opts.OwnCredentialGuard, tc.want)
			}
			err := opts.Validate().ToAggregate()
			var got string
			if err != nil {
				got = err.Error()
			}
			switch {
			case tc.wantErr == "" && err != nil && strings.Contains(got, "OwnCredentialGuard"):
				t.Errorf("Validate: unexpected error %v", err)
			case tc.wantErr != "" && !strings.Contains(got, tc.wantErr):
				t.Errorf("Validate error = %q, want it to contain %q", got, tc.wantErr)
			}
		})
	}
}

func TestHoldfastOwnCredentialGuardZeroValueIsValid(t *testing.T) {
	var o OwnCredentialGuardOptions
	if errs := o.Validate(); len(errs) != 0 {
		t.Errorf("zero value: %v", errs)
	}
}

func TestHoldfastOwnCredentialGuardMalformedFlag(t *testing.T) {
	opts := NewOptions()
	fs := pflag.NewFlagSet("karmada-controller-manager", pflag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	opts.AddFlags(fs, nil, nil)
	err := fs.Parse([]string{"--own-credential-guard-threshold=many"})
	if err == nil || !strings.Contains(err.Error(), "own-credential-guard-threshold") {
		t.Errorf("parse error = %v, want one naming the flag", err)
	}
}
