package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPinsList: `pins list --json` is the matrix workflow's include list,
// one line of JSON.
func TestPinsList(t *testing.T) {
	fx := fixture(t)
	root := fx.Config.Root
	code, stdout, stderr := runCLI(t, "pins", "list", "--root", root, "--json")
	if code != 0 || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var got []pinEntry
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != (pinEntry{Upstream: "up", Version: "v1.2.0", Series: "patches/up/1.2", Default: true}) {
		t.Errorf("pins %+v", got)
	}
	code, stdout, _ = runCLI(t, "pins", "list", "--root", root)
	if code != 0 || stdout != "up v1.2.0 patches/up/1.2 default\n" {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	code, _, stderr = runCLI(t, "pins", "list", "--root", root, "--upstream", "nope")
	if code != 1 || !strings.Contains(stderr, "nope") {
		t.Errorf("unknown upstream: exit %d, %s", code, stderr)
	}
}

// The tool builds themselves are toolcache's tests (and make
// lint-workflows); here only what the CLI adds.
func TestTools(t *testing.T) {
	code, stdout, stderr := runCLI(t, "tools", "key")
	if code != 0 || !strings.HasPrefix(stdout, "tools-go") || strings.Count(stdout, "\n") != 1 {
		t.Errorf("tools key: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"tools"}, "want `tools key` or `tools path NAME`"},
		{[]string{"tools", "path"}, "`tools path` needs a tool name (etcd, kube-apiserver, helm, actionlint, govulncheck, vulndb-indexdb, cosign, controller-gen, gremlins, promtool)"},
		{[]string{"tools", "path", "nope"}, `unknown tool "nope"`},
		{[]string{"tools", "key", "extra"}, `unexpected argument "extra"`},
	} {
		code, _, stderr := runCLI(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %s; want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}
