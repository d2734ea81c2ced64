package rebase

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipeline/patchset"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
)

func TestChooseSeries(t *testing.T) {
	f, err := pins.Parse("pins.txt", []byte(`upstream karmada github.com/karmada-io/karmada
	build .
	pin v1.18.2 h1:B1Eu3055LtTBndD/R2WcaS/bLvGwwVU1/3wXQjkIVN4= series=patches/karmada/1.18 revision=1 default
	pin v1.16.0 h1:B1Eu3055LtTBndD/R2WcaS/bLvGwwVU1/3wXQjkIVN4= series=patches/karmada/1.16 revision=1
	pin v1.20.0 h1:B1Eu3055LtTBndD/R2WcaS/bLvGwwVU1/3wXQjkIVN4= series=patches/karmada/1.20 revision=1
`))
	if err != nil {
		t.Fatal(err)
	}
	up, _ := f.Upstream("karmada")
	tests := []struct {
		version    string
		wantSeries string
		wantReason string
		wantErr    string
	}{
		{"v1.18.1", "patches/karmada/1.18", "the series of pinned v1.18.2", ""},
		{"v1.13.0", "patches/karmada/1.16", "no pin for v1.13; the series of the nearest pinned minor, v1.16.0", ""},
		{"v1.17.0", "patches/karmada/1.18", "no pin for v1.17; the series of the nearest pinned minor, v1.18.2", ""},
		{"v1.19.0", "patches/karmada/1.20", "nearest pinned minor, v1.20.0", ""}, // tie: the newer
		{"v2.0.0", "", "", "no pin of major v2"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			series, reason, err := chooseSeries(up, tt.version)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if series != tt.wantSeries || !strings.Contains(reason, tt.wantReason) {
				t.Errorf("got %s (%s), want %s (%s)", series, reason, tt.wantSeries, tt.wantReason)
			}
		})
	}
}

// secondPatch edits the line the fixture's patch adds, so it applies only
// after it.
const secondPatch = `Subject: Comment the refreshed call
Why: Shows that later patches see earlier ones.
Upstream-Issue: none
Upstream-PR: none
Applied-Upstream: no
Drop-When: never
Holdfast-Fix: fresh-token
---
diff --git a/pkg/util/client.go b/pkg/util/client.go
--- a/pkg/util/client.go
+++ b/pkg/util/client.go
@@ -2,5 +2,5 @@
 
 // Token returns the credential used for requests.
 func Token() string {
-	return refreshed()
+	return refreshed() // from the carried library
 }
`

func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
}

func TestRun(t *testing.T) {
	needGo(t)
	tests := []struct {
		version      string
		wantStatus   []Status
		wantVerified string
		wantNotes    []string
		wantResult   string
	}{
		{
			version: "v1.2.0", wantStatus: []Status{Clean, Clean}, wantVerified: "the pin",
			wantResult: "result: CLEAN: v1.2.0 can be pinned with series patches/up/1.2",
		},
		{
			version: "v1.3.0", wantStatus: []Status{Offset, Offset}, wantVerified: "the checksum database",
			wantNotes:  []string{"pkg/util/client.go: hunk #1 (@@ -2,5 +2,5 @@): context found 2 lines further down", "refresh the patch against v1.3.0"},
			wantResult: "result: NEEDS REFRESH",
		},
		{
			version: "v1.1.0", wantStatus: []Status{Conflict, Conflict},
			wantNotes:  []string{`pkg/util/client.go: hunk #1 (@@ -2,5 +2,5 @@): CONFLICT: expected line 3 to be "// Token returns the credential used for requests.", found "// Token returns the token."`},
			wantResult: "result: CONFLICT",
		},
		{
			// The first patch is upstream; the second, which only
			// needs upstream's line, still applies.
			version: "v1.4.0", wantStatus: []Status{AlreadyUpstream, Clean},
			wantNotes:  []string{"reverse-applies to pristine v1.4.0: drop it from this series (Applied-Upstream: v1.4.0 agrees)"},
			wantResult: "result: NEEDS REFRESH",
		},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			fx := pipelinetest.New(t)
			pipelinetest.Write(t, fx.Config.Root, map[string]string{"patches/up/1.2/0002-comment.patch": secondPatch})
			r, err := Run(context.Background(), fx.Config, Options{Upstream: fx.Upstream, Version: tt.version})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			var got []Status
			var notes []string
			for _, p := range r.Patches {
				got = append(got, p.Status)
				notes = append(notes, p.Notes...)
			}
			if len(got) != len(tt.wantStatus) {
				t.Fatalf("statuses %v, want %v", got, tt.wantStatus)
			}
			for i := range got {
				if got[i] != tt.wantStatus[i] {
					t.Errorf("statuses %v, want %v", got, tt.wantStatus)
					break
				}
			}
			if r.Module.Sum != fx.Sums[tt.version] {
				t.Errorf("recorded sum %s, want %s", r.Module.Sum, fx.Sums[tt.version])
			}
			if !strings.Contains(r.Verified, tt.wantVerified) {
				t.Errorf("verified against %q, want %q", r.Verified, tt.wantVerified)
			}
			all := strings.Join(notes, "\n")
			for _, w := range tt.wantNotes {
				if !strings.Contains(all, w) {
					t.Errorf("notes lack %q:\n%s", w, all)
				}
			}
			var out bytes.Buffer
			if err := r.Write(&out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tt.wantResult) {
				t.Errorf("report lacks %q:\n%s", tt.wantResult, out.String())
			}
			if r.Clean() != (tt.wantResult == "result: CLEAN: v1.2.0 can be pinned with series patches/up/1.2") {
				t.Errorf("Clean() = %v", r.Clean())
			}
		})
	}
}

func TestRunRefusesVersionQueries(t *testing.T) {
	fx := pipelinetest.New(t)
	for _, v := range []string{"latest", "v1.2", "1.2.0", ""} {
		_, err := Run(context.Background(), fx.Config, Options{Upstream: fx.Upstream, Version: v, Series: "patches/up/1.2"})
		if err == nil || !strings.Contains(err.Error(), "not a full semantic version") {
			t.Errorf("version %q: err = %v", v, err)
		}
	}
}

// A tag the module proxy does not have is named as such, not as a major
// without a pin (the first thing wrong with v9.0.0 is that it does not exist).
func TestRunNamesAVersionTheProxyLacks(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	_, err := Run(context.Background(), fx.Config, Options{Upstream: fx.Upstream, Version: "v9.0.0"})
	if err == nil || !strings.Contains(err.Error(), "v9.0.0 cannot be fetched from the module proxy") || strings.Contains(err.Error(), "no pin of major") {
		t.Fatalf("err = %v, want it to say the proxy has no v9.0.0", err)
	}
	t.Log(err)
}

func TestRunRefusesTamperedSource(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	m, err := fx.Config.Download.Download(context.Background(), pipelinetest.Module, "v1.3.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(m.Dir+"/pkg/util/client.go", []byte(pipelinetest.ClientGo), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), fx.Config, Options{Upstream: fx.Upstream, Version: "v1.3.0"})
	if err == nil || !strings.Contains(err.Error(), "module cache was modified") {
		t.Errorf("err = %v", err)
	}
}

// The pristine-check hook gets a pristine tree with the regression tests
// in it; here it runs them, as the build and test step will.
func TestPristineCheckHook(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	goTest := func(ctx context.Context, tree string) (bool, string, error) {
		cmd := exec.CommandContext(ctx, "go", "test", "./pkg/util/")
		cmd.Dir = tree
		cmd.Env = append(os.Environ(), fx.Env()...)
		out, err := cmd.CombinedOutput()
		if _, failed := err.(*exec.ExitError); failed {
			if !bytes.Contains(out, []byte("the token is frozen")) {
				return false, "", fmt.Errorf("go test failed for another reason:\n%s", out)
			}
			return false, "TestTokenIsFresh fails", nil
		}
		if err != nil {
			return false, "", err
		}
		return true, "TestTokenIsFresh passes", nil
	}
	tests := []struct {
		version string
		want    string
	}{
		{"v1.2.0", "regression tests FAIL on pristine v1.2.0 as expected"},
		{"v1.4.0", "regression tests PASS on pristine v1.4.0: upstream fixed it"},
	}
	for _, tt := range tests {
		r, err := Run(context.Background(), fx.Config, Options{Upstream: fx.Upstream, Version: tt.version, PristineCheck: goTest})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Pristine, tt.want) {
			t.Errorf("%s: pristine check = %q, want %q", tt.version, r.Pristine, tt.want)
		}
	}
}

// TestUpstreamFixWording: the fixture's patch says Applied-Upstream: v1.4.0.
// On v1.4.0 the report must say whether upstream's own fix supersedes the
// carried patch or is weaker than it, from the regression verdict on
// pristine the caller supplies (a Karmada build cannot run here; the stub
// stands for treetest.PristineCheck's answer).
func TestUpstreamFixWording(t *testing.T) {
	needGo(t)
	verdict := func(fixed bool) PristineCheck {
		return func(context.Context, string) (bool, string, error) {
			if fixed {
				return true, "TestTokenIsFresh: GREEN", nil
			}
			return false, "TestTokenIsFresh: RED", nil
		}
	}
	tests := []struct {
		name    string
		version string
		check   PristineCheck
		want    string
		wantNot []string
	}{
		{"regression passes on pristine", "v1.4.0", verdict(true), "upstream fix present; carried patch superseded", []string{string(FixWeaker)}},
		{"regression fails on pristine", "v1.4.0", verdict(false), "upstream fix present but weaker; carried as enhancement", []string{string(FixSuperseded)}},
		{"regression not run", "v1.4.0", nil, "upstream fix present per headers (Applied-Upstream: v1.4.0); regression check not run", []string{string(FixSuperseded), string(FixWeaker)}},
		{"older than Applied-Upstream", "v1.3.0", verdict(false), "", []string{"upstream fix present"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := pipelinetest.New(t)
			r, err := Run(context.Background(), fx.Config, Options{Upstream: fx.Upstream, Version: tt.version, PristineCheck: tt.check})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := r.Write(&out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("report lacks %q:\n%s", tt.want, out.String())
			}
			for _, bad := range tt.wantNot {
				if strings.Contains(out.String(), bad) {
					t.Errorf("report says %q:\n%s", bad, out.String())
				}
			}
		})
	}
}

// TestClassifyUpstreamFix is the decision rule on Karmada's headers: PR
// 7663 is in v1.19.0-rc.0 and backported to release-1.18 with no tag yet;
// upstream's fix still returns the first 401, which the regression test
// catches (RegressionFails).
func TestClassifyUpstreamFix(t *testing.T) {
	karmada := patchset.Header{
		AppliedUpstream:  "v1.19.0-rc.0",
		UpstreamBackport: "https://github.com/karmada-io/karmada/pull/7847 (PR 7663 backported\n to release-1.18, merged; no v1.18.x tag the module proxy serves contains it yet)",
	}
	tagged := karmada
	tagged.UpstreamBackport = "https://github.com/karmada-io/karmada/pull/7847 (in v1.18.3)"
	ours := patchset.Header{AppliedUpstream: "no"}
	tests := []struct {
		name    string
		h       patchset.Header
		version string
		reg     Regression
		want    UpstreamFix
		why     string
	}{
		{"v1.19.0, test still fails: weaker", karmada, "v1.19.0", RegressionFails, FixWeaker, "Applied-Upstream: v1.19.0-rc.0, but the regression tests still fail on pristine v1.19.0"},
		{"v1.19.0, test passes: superseded", karmada, "v1.19.0", RegressionPasses, FixSuperseded, "Applied-Upstream: v1.19.0-rc.0, and the regression tests pass on pristine v1.19.0"},
		{"the rc itself counts", karmada, "v1.19.0-rc.0", RegressionFails, FixWeaker, ""},
		{"v1.19.0, not run", karmada, "v1.19.0", RegressionNotRun, FixUnverified, "regression check not run"},
		{"v1.18.3, untagged backport, test passes", karmada, "v1.18.3", RegressionPasses, FixSuperseded, "Upstream-Backport https://github.com/karmada-io/karmada/pull/7847, and the regression tests pass"},
		{"v1.18.3, untagged backport, test fails: undecided", karmada, "v1.18.3", RegressionFails, "", ""},
		{"v1.18.3, backport tagged v1.18.3, test fails", tagged, "v1.18.3", RegressionFails, FixWeaker, "Upstream-Backport in v1.18.3, but"},
		{"v1.18.2, before the tagged backport", tagged, "v1.18.2", RegressionFails, "", ""},
		{"v1.17.9: the backport tag is of another minor", tagged, "v1.17.9", RegressionFails, "", ""},
		{"holdfast's own fix: no claim even if the test passes", ours, "v1.20.0", RegressionPasses, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := ClassifyUpstreamFix(tt.h, tt.version, tt.reg)
			if got != tt.want || !strings.Contains(why, tt.why) {
				t.Errorf("got %q (%s), want %q (%s)", got, why, tt.want, tt.why)
			}
		})
	}
}

// TestRebaseReportsOverrides: each override entry is judged against the
// new version's go.mod: still needed, superseded by upstream, or in
// conflict; a superseded entry keeps the version from pinning as is, a
// conflicting one makes the result a conflict.
func TestRebaseReportsOverrides(t *testing.T) {
	fx := pipelinetest.New(t)
	for v, goMod := range map[string]string{
		"v1.5.0": "require example.com/dep v1.0.0\n",
		"v1.6.0": "require example.com/dep v1.0.1\n",
		"v1.7.0": "",
	} {
		fx.Proxy.Add(t, pipelinetest.Module, v, map[string]string{
			"go.mod":             "module " + pipelinetest.Module + "\n\ngo 1.22\n\n" + goMod,
			"pkg/util/client.go": pipelinetest.ClientGo,
		})
	}
	pipelinetest.Write(t, fx.Config.Root, map[string]string{"patches/up/1.5/overrides": `example.com/dep v1.0.1
	fixes GO-2099-0001
	drop-when upstream requires >= v1.0.1
	why the patch release with the fix
`})
	for _, c := range []struct{ version, status, result string }{
		{"v1.5.0", "example.com/dep v1.0.1  still needed (upstream requires v1.0.0)", "result: CLEAN"},
		{"v1.6.0", "example.com/dep v1.0.1  superseded by upstream (upstream requires v1.0.1)", "result: NEEDS REFRESH"},
		{"v1.7.0", "example.com/dep v1.0.1  conflicts (not required upstream)", "result: CONFLICT: fix the conflicting overrides"},
	} {
		r, err := Run(context.Background(), fx.Config, Options{Upstream: fx.Upstream, Version: c.version, Series: "patches/up/1.5"})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := r.Write(&out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), c.status) || !strings.Contains(out.String(), c.result) {
			t.Errorf("%s: report lacks %q or %q:\n%s", c.version, c.status, c.result, out.String())
		}
	}
}

// TestRebaseJudgesTheGoEntry: a new upstream version whose own go line is
// at least the series' go entry makes the entry superseded (drop it and
// its godebug line); below it, the entry is still needed.
func TestRebaseJudgesTheGoEntry(t *testing.T) {
	fx := pipelinetest.New(t)
	for v, goLine := range map[string]string{"v1.5.0": "1.22", "v1.6.0": "1.24.0"} {
		fx.Proxy.Add(t, pipelinetest.Module, v, map[string]string{
			"go.mod":             "module " + pipelinetest.Module + "\n\ngo " + goLine + "\n\nrequire example.com/dep v1.0.0\n",
			"pkg/util/client.go": pipelinetest.ClientGo,
		})
	}
	pipelinetest.Write(t, fx.Config.Root, map[string]string{"patches/up/1.5/overrides": `go 1.23.0
	why example.com/dep v1.0.1 says go 1.23.0

example.com/dep v1.0.1
	fixes GO-2099-0001
	drop-when upstream requires >= v1.0.1
	why the patch release with the fix; it says go 1.23.0 (the go entry)
`})
	for _, c := range []struct{ version, status, result string }{
		{"v1.5.0", "go 1.23.0               still needed (upstream's go line 1.22)", "result: CLEAN"},
		{"v1.6.0", "go 1.23.0               superseded by upstream (upstream's go line 1.24.0)\n      upstream's go line 1.24.0 is at least 1.23.0: drop the go entry", "result: NEEDS REFRESH"},
	} {
		r, err := Run(context.Background(), fx.Config, Options{Upstream: fx.Upstream, Version: c.version, Series: "patches/up/1.5"})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := r.Write(&out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), c.status) || !strings.Contains(out.String(), c.result) {
			t.Errorf("%s: report lacks %q or %q:\n%s", c.version, c.status, c.result, out.String())
		}
	}
}
