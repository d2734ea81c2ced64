package rebase

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
)

// waitingCheck is a PristineCheck that returns only once log holds want:
// it stands for a regression check long enough for a heartbeat, without
// depending on how long the machine takes. It gives up after a minute.
func waitingCheck(log *pipelinetest.LockedBuffer, want string) PristineCheck {
	return func(ctx context.Context, tree string) (bool, string, error) {
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(log.String(), want) {
			if time.Now().After(deadline) {
				return false, "no heartbeat", nil
			}
			time.Sleep(time.Millisecond)
		}
		return false, "waited for the heartbeat", nil
	}
}

// TestHeartbeatOnTheRegressionCheck: while the regression check on pristine
// runs, Log gets "still running ..." lines; none once Run has returned.
func TestHeartbeatOnTheRegressionCheck(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	log := &pipelinetest.LockedBuffer{}
	want := "  still running the regression tests on pristine v1.2.0 ("
	r, err := Run(context.Background(), fx.Config, Options{
		Upstream: fx.Upstream, Version: "v1.2.0", Log: log, Heartbeat: time.Millisecond,
		PristineCheck: waitingCheck(log, want),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Pristine, "waited for the heartbeat") {
		t.Fatalf("the check saw no heartbeat line %q in a minute; log:\n%s", want, log.String())
	}
	after := log.String()
	time.Sleep(20 * time.Millisecond)
	if got := log.String(); got != after {
		t.Errorf("heartbeat lines after Run returned:\n%s", strings.TrimPrefix(got, after))
	}
	for _, line := range strings.Split(strings.TrimRight(after, "\n"), "\n") {
		if !strings.HasPrefix(line, "  still ") {
			t.Errorf("log line %q is not a heartbeat: the report is the caller's to print", line)
		}
	}
}

// jsonKeys are the JSON report's top-level keys, as docs/pipeline.md lists
// them: removing or renaming one breaks the readers the schema promises.
var jsonKeys = []string{
	"counts", "module", "overrides", "patches", "pristine", "regression", "result", "resultMessage",
	"schema", "series", "seriesReason", "sum", "upstream", "verified", "version",
}

// TestJSONKeysAreCamelCase: every key the JSON report can hold, those
// left out when empty too, is camelCase, as in treetest's report; the
// schema was snake_case until issue 37.
func TestJSONKeysAreCamelCase(t *testing.T) {
	if bad := pipelinetest.NonCamelCaseFields(reflect.TypeFor[JSONReport]()); len(bad) > 0 {
		t.Errorf("JSON keys not camelCase: %q", bad)
	}
}

// TestJSONReport: the JSON report says what the human one says.
func TestJSONReport(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	pipelinetest.Write(t, fx.Config.Root, map[string]string{"patches/up/1.2/0002-comment.patch": secondPatch})
	for _, tt := range []struct{ version, result string }{
		{"v1.2.0", ResultClean}, {"v1.3.0", ResultNeedsRefresh}, {"v1.1.0", ResultConflict},
	} {
		r, err := Run(context.Background(), fx.Config, Options{Upstream: fx.Upstream, Version: tt.version})
		if err != nil {
			t.Fatal(err)
		}
		var js, text bytes.Buffer
		if err := r.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		if err := r.Write(&text); err != nil {
			t.Fatal(err)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(js.Bytes(), &keys); err != nil {
			t.Fatal(err)
		}
		var got []string
		for k := range keys {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, jsonKeys) {
			t.Errorf("%s: keys %v, want %v", tt.version, got, jsonKeys)
		}
		if bad, err := pipelinetest.NonCamelCaseKeys(js.Bytes()); err != nil || len(bad) > 0 {
			t.Errorf("%s: keys not camelCase %q (%v):\n%s", tt.version, bad, err, js.String())
		}
		var j JSONReport
		if err := json.Unmarshal(js.Bytes(), &j); err != nil {
			t.Fatal(err)
		}
		if j.Schema != JSONSchema || j.Upstream != "up" || j.Module != pipelinetest.Module || j.Version != tt.version ||
			j.Sum != fx.Sums[tt.version] || j.Series != "patches/up/1.2" || j.Result != tt.result {
			t.Errorf("%s: JSON %+v", tt.version, j)
		}
		lines := strings.Split(strings.TrimSpace(text.String()), "\n")
		if last := lines[len(lines)-1]; last != "result: "+j.ResultMessage {
			t.Errorf("%s: JSON resultMessage %q, the human report ends %q", tt.version, j.ResultMessage, last)
		}
		if len(j.Patches) != len(r.Patches) {
			t.Fatalf("%s: %d patches in JSON, %d in the report", tt.version, len(j.Patches), len(r.Patches))
		}
		for i, p := range r.Patches {
			jp := j.Patches[i]
			if jp.Name != p.Patch.Name() || jp.Status != p.Status || !slices.Equal(jp.Notes, p.Notes) {
				t.Errorf("%s: JSON patch %+v, report %s %s %v", tt.version, jp, p.Patch.Name(), p.Status, p.Notes)
			}
			if !strings.Contains(text.String(), "  "+p.Patch.Name()) {
				t.Errorf("%s: human report lacks %s", tt.version, p.Patch.Name())
			}
		}
		c := j.Counts
		if c.Clean != r.Count(Clean) || c.Offset != r.Count(Offset) || c.Conflict != r.Count(Conflict) || c.AlreadyUpstream != r.Count(AlreadyUpstream) || c.Clean+c.Offset+c.Conflict+c.AlreadyUpstream != 2 {
			t.Errorf("%s: counts %+v", tt.version, c)
		}
		if j.Overrides == nil || j.Patches == nil {
			t.Errorf("%s: an empty list must be [], not null:\n%s", tt.version, js.String())
		}
	}
}

// TestSave: both files, whole; on an error no temporary file is left and
// no report is half written.
func TestSave(t *testing.T) {
	needGo(t)
	fx := pipelinetest.New(t)
	r, err := Run(context.Background(), fx.Config, Options{Upstream: fx.Upstream, Version: "v1.3.0"})
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	r.Write(&text)
	r.WriteJSON(&js)
	dir := filepath.Join(t.TempDir(), "rebase")
	paths, err := r.Save(dir, "rebase-up-v1.3.0")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "rebase-up-v1.3.0.txt"), filepath.Join(dir, "rebase-up-v1.3.0.json")}; !slices.Equal(paths, want) {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	for path, want := range map[string][]byte{paths[0]: text.Bytes(), paths[1]: js.Bytes()} {
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v\n%s\nwant\n%s", path, err, got, want)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, %v; want 0644", path, fi.Mode(), err)
		}
	}

	// A folder where the JSON report goes: its rename fails.
	bad := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bad, "r.json", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Save(bad, "r"); err == nil || !strings.Contains(err.Error(), "r.json") {
		t.Fatalf("err = %v, want the JSON report named", err)
	}
	entries, _ := os.ReadDir(bad)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"r.json", "r.txt"}) {
		t.Errorf("folder holds %v, want r.json (the obstacle) and r.txt, no temporary file", names)
	}
	if got, _ := os.ReadFile(filepath.Join(bad, "r.txt")); !bytes.Equal(got, text.Bytes()) {
		t.Errorf("r.txt is not the whole report:\n%s", got)
	}
}
