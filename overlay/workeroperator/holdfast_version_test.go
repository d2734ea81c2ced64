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

// Tests of the --version glue (holdfast_version.go), laid beside it from
// overlay/workeroperator: patched tree only.

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubeslice/worker-operator/pkg/holdfastversion"
)

func TestHoldfastVersionRequested(t *testing.T) {
	cases := []struct {
		args []string
		want bool
	}{
		{[]string{"--version"}, true},
		{[]string{"-version"}, true},
		{nil, false},
		{[]string{"--version=true"}, false},
		{[]string{"--leader-elect", "--version"}, false},
		{[]string{"--version", "--leader-elect"}, false},
		{[]string{"version"}, false},
		{[]string{"--metrics-bind-address", "--version"}, false},
	}
	for _, c := range cases {
		if got := holdfastVersionRequested(c.args); got != c.want {
			t.Errorf("holdfastVersionRequested(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

func TestHoldfastPrintVersion(t *testing.T) {
	version, series := holdfastversion.Version, holdfastversion.SeriesHash
	t.Cleanup(func() { holdfastversion.Version, holdfastversion.SeriesHash = version, series })
	holdfastversion.Version, holdfastversion.SeriesHash = "v1.6.4-holdfast.9", "0123456789ab"

	var out bytes.Buffer
	holdfastPrintVersion(&out)
	if got, want := out.String(), "v1.6.4-holdfast.9 (series 0123456789ab)\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	if first := strings.Fields(out.String())[0]; first != "v1.6.4-holdfast.9" {
		t.Errorf("first word %q is not the version", first)
	}
}
