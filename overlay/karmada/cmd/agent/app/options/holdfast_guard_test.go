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
// uses the flags patch 0006-agent-follows-kubeconfig adds, which the
// pristine tree does not have.

package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	cmoptions "github.com/karmada-io/karmada/cmd/controller-manager/app/options"
)

// TestHoldfastAgentGuardFlagsAreTheControllerManagers: one guard, one set
// of flags: karmada-agent takes the controller-manager's four
// --own-credential-guard-* flags with the same defaults and help, so a
// value documented for one works on the other.
func TestHoldfastAgentGuardFlagsAreTheControllerManagers(t *testing.T) {
	agent := pflag.NewFlagSet("karmada-agent", pflag.ContinueOnError)
	NewOptions().AddFlags(agent, []string{"clusterStatus"})
	cm := pflag.NewFlagSet("karmada-controller-manager", pflag.ContinueOnError)
	var cmGuard cmoptions.OwnCredentialGuardOptions
	cmGuard.AddFlags(cm)
	n := 0
	cm.VisitAll(func(want *pflag.Flag) {
		n++
		got := agent.Lookup(want.Name)
		if got == nil {
			t.Errorf("karmada-agent has no --%s", want.Name)
			return
		}
		if got.DefValue != want.DefValue || got.Usage != want.Usage {
			t.Errorf("--%s: default %q, usage %q; the controller-manager's: %q, %q", want.Name, got.DefValue, got.Usage, want.DefValue, want.Usage)
		}
	})
	if n != 4 {
		t.Errorf("the controller-manager has %d guard flags, want 4", n)
	}
}

// TestHoldfastAgentValidatesGuardFlags: a bad guard value stops the agent
// at Validate, naming the flag, before it builds any client.
func TestHoldfastAgentValidatesGuardFlags(t *testing.T) {
	fs := pflag.NewFlagSet("karmada-agent", pflag.ContinueOnError)
	o := NewOptions()
	o.AddFlags(fs, []string{"clusterStatus"})
	if err := fs.Parse([]string{"--cluster-name=member1", "--own-credential-guard-action=exti"}); err != nil {
		t.Fatal(err)
	}
	errs := o.Validate()
	if !strings.Contains(errs.ToAggregate().Error(), `--own-credential-guard-action must be "exit", "unhealthy" or "off"`) {
		t.Errorf("Validate: %v; want the guard action refused by name", errs.ToAggregate())
	}
	fs = pflag.NewFlagSet("karmada-agent", pflag.ContinueOnError)
	o = NewOptions()
	o.AddFlags(fs, []string{"clusterStatus"})
	if err := fs.Parse([]string{"--cluster-name=member1"}); err != nil {
		t.Fatal(err)
	}
	for _, e := range o.Validate() {
		if strings.Contains(e.Error(), "own-credential-guard") {
			t.Errorf("Validate with the defaults: %v", e)
		}
	}
}
