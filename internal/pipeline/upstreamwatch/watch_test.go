package upstreamwatch

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/rebase"
)

// fixture serves pinned v1.2.0, v1.2.1, v1.3.0 and v1.4.0 (and v1.1.0,
// below the pin) from pipelinetest, plus two release candidates: one of
// an already released minor and one of a minor with no release yet.
func fixture(t *testing.T) *pipelinetest.Fixture {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	fx := pipelinetest.New(t)
	for _, v := range []string{"v1.4.0-rc.1", "v1.5.0-rc.1"} {
		fx.Proxy.Add(t, pipelinetest.Module, v, map[string]string{"pkg/util/client.go": pipelinetest.Versions["v1.3.0"]})
	}
	return fx
}

func TestRun(t *testing.T) {
	fx := fixture(t)
	f := &pins.File{Upstreams: []*pins.Upstream{fx.Upstream}}
	tests := []struct {
		pre  bool
		want []string
	}{
		{false, []string{
			"up v1.2.1: clean (new patch of pinned v1.2 (pin v1.2.0)): 1 clean, 0 with offset, 0 conflicting, 0 already upstream; series patches/up/1.2",
			"up v1.3.0: offset (new minor v1.3 (newest pin v1.2.0)): 0 clean, 1 with offset",
			"up v1.4.0: already upstream (new minor v1.4 (newest pin v1.2.0)): 0 clean, 0 with offset, 0 conflicting, 1 already upstream",
		}},
		{true, []string{
			"up v1.2.1: clean",
			"up v1.3.0: offset",
			"up v1.4.0: already upstream",
			"up v1.5.0-rc.1: offset (new minor v1.5 (newest pin v1.2.0))",
		}},
	}
	for _, tt := range tests {
		var log bytes.Buffer
		r, err := Run(context.Background(), fx.Config, f, Options{PreReleases: tt.pre, Log: &log})
		if err != nil {
			t.Fatalf("pre=%v: Run: %v", tt.pre, err)
		}
		got := r.Summary()
		if len(got) != len(tt.want) {
			t.Fatalf("pre=%v: summary:\n%s\nwant %d lines", tt.pre, strings.Join(got, "\n"), len(tt.want))
		}
		for i := range got {
			if !strings.HasPrefix(got[i], tt.want[i]) {
				t.Errorf("pre=%v: line %d:\n got %s\nwant %s...", tt.pre, i, got[i], tt.want[i])
			}
		}
		if all := strings.Join(got, "\n"); strings.Contains(all, "v1.4.0-rc.1") {
			t.Errorf("pre=%v: the rc of a released minor was tried:\n%s", tt.pre, all)
		}
		if !strings.Contains(log.String(), "watch: rebasing up onto v1.3.0") {
			t.Errorf("progress log lacks the rebase step:\n%s", log.String())
		}
	}
}

func TestReports(t *testing.T) {
	fx := fixture(t)
	f := &pins.File{Upstreams: []*pins.Upstream{fx.Upstream}}
	r, err := Run(context.Background(), fx.Config, f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, err := r.Save(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || !strings.HasSuffix(paths[0], "watch.md") || !strings.HasSuffix(paths[1], "watch.json") {
		t.Fatalf("paths %v", paths)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| up | v1.2.1 | new patch of pinned v1.2 (pin v1.2.0) | clean |",
		"| up | v1.3.0 | new minor v1.3 (newest pin v1.2.0) | offset |",
		"## up v1.4.0: already upstream",
		"reverse-applies to pristine v1.4.0: drop it from this series",
		"result: NEEDS REFRESH",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if bad, err := pipelinetest.NonCamelCaseKeys(js.Bytes()); err != nil || len(bad) > 0 {
		t.Errorf("watch.json keys not camelCase %q (%v):\n%s", bad, err, js.String())
	}
	var got struct {
		Schema    string
		New       int
		Upstreams []struct {
			Tags []struct {
				Version, Verdict string
				Patches          []struct {
					Name, Status string
					UpstreamFix  string `json:"upstreamFix"`
				}
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Schema != JSONSchema || got.New != 3 || len(got.Upstreams) != 1 || len(got.Upstreams[0].Tags) != 3 {
		t.Fatalf("JSON:\n%s", js.String())
	}
	if tag := got.Upstreams[0].Tags[1]; tag.Version != "v1.3.0" || tag.Verdict != "offset" || tag.Patches[0].Status != "applies with offset" || tag.Patches[0].UpstreamFix != "" {
		t.Errorf("JSON tag v1.3.0: %+v", tag)
	}
	// Applied-Upstream: v1.4.0 and no regression check: the headers' claim,
	// unverified.
	if tag := got.Upstreams[0].Tags[2]; tag.Version != "v1.4.0" || tag.Patches[0].UpstreamFix != "upstream fix present per headers" {
		t.Errorf("JSON tag v1.4.0: %+v", tag)
	}
}

// Nothing new is a report too, and not an error.
func TestRunNothingNew(t *testing.T) {
	fx := fixture(t)
	up := *fx.Upstream
	up.Pins = []pins.Pin{
		{Version: "v1.4.0", Sum: fx.Sums["v1.4.0"], Series: "patches/up/1.2"},
		{Version: "v1.2.1", Sum: fx.Sums["v1.2.1"], Series: "patches/up/1.2"},
	}
	r, err := Run(context.Background(), fx.Config, &pins.File{Upstreams: []*pins.Upstream{&up}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Summary(), "\n"); r.New() != 0 || !strings.HasPrefix(got, "up: nothing new (pins v1.4.0 v1.2.1; the proxy lists 7 versions)") {
		t.Errorf("summary %q, new %d", got, r.New())
	}
}

// A module the proxy does not serve is an error naming the upstream, and
// the report still says which upstream it was.
func TestRunListFailure(t *testing.T) {
	fx := fixture(t)
	up := *fx.Upstream
	up.Module = "example.com/missing"
	r, err := Run(context.Background(), fx.Config, &pins.File{Upstreams: []*pins.Upstream{&up}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "up: go list -m -versions example.com/missing") {
		t.Fatalf("err = %v", err)
	}
	if got := strings.Join(r.Summary(), "\n"); !strings.HasPrefix(got, "up: error: could not list versions") {
		t.Errorf("summary %q", got)
	}
}

func TestRunUnknownUpstream(t *testing.T) {
	fx := fixture(t)
	_, err := Run(context.Background(), fx.Config, &pins.File{Upstreams: []*pins.Upstream{fx.Upstream}}, Options{Only: "nope"})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("err = %v", err)
	}
}

// TestHeartbeat: the watch hands its log and interval to each rebase, so a
// long regression check on a tag's pristine tree says it is alive. The
// check returns only once it has seen its tag's heartbeat (or after a
// minute, then saying so).
func TestHeartbeat(t *testing.T) {
	fx := fixture(t)
	f := &pins.File{Upstreams: []*pins.Upstream{fx.Upstream}}
	log := &pipelinetest.LockedBuffer{}
	// While a check runs only the heartbeat writes, after the tag's
	// "watch: rebasing" line: its last line is this tag's heartbeat.
	check := func(up *pins.Upstream) rebase.PristineCheck {
		return func(ctx context.Context, tree string) (bool, string, error) {
			deadline := time.Now().Add(time.Minute)
			for time.Now().Before(deadline) {
				lines := strings.Split(strings.TrimRight(log.String(), "\n"), "\n")
				if strings.HasPrefix(lines[len(lines)-1], "  still running the regression tests on pristine ") {
					return false, "heartbeat seen", nil
				}
				time.Sleep(time.Millisecond)
			}
			return false, "no heartbeat", nil
		}
	}
	r, err := Run(context.Background(), fx.Config, f, Options{Log: log, Heartbeat: time.Millisecond, PristineCheck: check})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range r.Upstreams {
		for _, tag := range u.Tags {
			want := "  still running the regression tests on pristine " + tag.Version + " ("
			if !strings.Contains(log.String(), want) || !strings.Contains(tag.Rebase.Pristine, "heartbeat seen") {
				t.Errorf("%s: no heartbeat %q; pristine %q; log:\n%s", tag.Version, want, tag.Rebase.Pristine, log.String())
			}
		}
	}
}

// TestJSONKeysAreCamelCase: every key watch.json can hold, the tags'
// rebase patches and overrides included, is camelCase, as the rebase
// report's and treetest's are.
func TestJSONKeysAreCamelCase(t *testing.T) {
	if bad := pipelinetest.NonCamelCaseFields(reflect.TypeFor[jsonReport]()); len(bad) > 0 {
		t.Errorf("watch.json keys not camelCase: %q", bad)
	}
}
