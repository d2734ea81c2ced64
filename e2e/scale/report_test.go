package scale

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func run(k int, s Storm, v Variant, p99 time.Duration, requests, lists int, cm Credentials) Run {
	return Run{
		K: k, APIServers: 3, Storm: s, Variant: v, Timeout: time.Minute,
		Recovery: Summary{Members: k, Recovered: k, P50: p99 / 2, P99: p99, Max: p99},
		Members: Requests{Total: requests, Lists: lists, ByVerb: map[string]int{"get": requests - lists, "list": lists},
			ListsByCause: map[string]int{CauseWatchCut: lists}, ListCauses: map[string]map[string]int{CauseWatchCut: {"karmada-search deployments": lists}}},
		Credentials: []Credentials{cm},
	}
}

func once(k int) Credentials {
	return Credentials{Component: ControllerManager, Served: true, ReadsMin: 1, ReadsMax: 1, MembersRead1: k, MembersOnePerRotation: k}
}

// goodReport meets every target: patched recovers within a status period
// + 2 s, reads each Secret once, relists no more than the control, beats
// the restart workaround and grows linearly.
func goodReport() *Report {
	r := &Report{StatusPeriod: 2 * time.Second, Ks: []int{10, 50}, Wall: map[int]time.Duration{10: time.Minute}}
	for _, k := range r.Ks {
		r.Planes = append(r.Planes, Plane{K: k, Build: Pristine, SteadyRSS: 100 << 20}, Plane{K: k, Build: Patched, SteadyRSS: 102 << 20})
		r.Runs = append(r.Runs,
			run(k, Control, Patched, time.Second, 100, 20, Credentials{Component: ControllerManager, Served: true}),
			run(k, OnTime, Patched, 3*time.Second, 300, 20, once(k)),
			run(k, OnTime, Restart, 8*time.Second, 900, 200, Credentials{Component: ControllerManager}),
			func() Run {
				p := run(k, OnTime, Pristine, 0, 1000, 400, Credentials{Component: ControllerManager})
				p.Recovery = Summarize([]time.Duration{NotRecovered})
				return p
			}(),
		)
	}
	return r
}

func verdict(t *testing.T, r *Report, prefix string) Verdict {
	t.Helper()
	for _, v := range r.Verdicts {
		if strings.HasPrefix(v.Target, prefix) {
			return v
		}
	}
	t.Fatalf("no verdict %q in %+v", prefix, r.Verdicts)
	return Verdict{}
}

func TestJudgeMet(t *testing.T) {
	r := goodReport()
	r.Judge()
	for _, v := range r.Verdicts {
		if !v.Met {
			t.Errorf("%s: missed (%s), want met", v.Target, v.Detail)
		}
	}
	if d := verdict(t, r, "patched: p99").Detail; !strings.Contains(d, "K = 50 (the issue asks K = 100") {
		t.Errorf("the verdict must say which K stood for 100: %s", d)
	}
	if d := verdict(t, r, "patched beats pristine+restart on p99 recovery (on-time)").Detail; !strings.Contains(d, "K=10: 3.0 s vs 8.0 s (2.7× faster, 5.0 s less)") {
		t.Errorf("by how much: %s", d)
	}
}

func TestJudgeMissed(t *testing.T) {
	for _, tc := range []struct {
		target string
		spoil  func(r *Report)
	}{
		{"patched: p99", func(r *Report) { r.Runs[5].Recovery.P99 = 4500 * time.Millisecond }},
		{"patched: p99", func(r *Report) { r.Runs[5].Recovery.Recovered-- }},
		{"patched: exactly one Secret read", func(r *Report) {
			// One member read twice with no periodic re-read due.
			c := &r.Runs[5].Credentials[0]
			c.ReadsMax, c.MembersRead1, c.MembersOnePerRotation = 2, c.MembersRead1-1, c.MembersOnePerRotation-1
		}},
		{"patched: exactly one Secret read", func(r *Report) { r.Runs[5].Credentials[0] = Credentials{Component: ControllerManager} }},
		{"patched: no relist", func(r *Report) {
			r.Runs[5].Members.ListsByCause = map[string]int{CauseWatchCut: 19, CauseAfter401: 1}
		}},
		// Causes for fewer lists than counted: not judged.
		{"patched: no relist", func(r *Report) { r.Runs[5].Members.Lists = 23 }},
		{"patched: no relist", func(r *Report) { r.Runs[5].Members = Requests{ListsByCause: map[string]int{}} }},
		{"patched: 0 persisted", func(r *Report) { r.Runs[1].Credentials[0].Persisted = 1 }},
		{"patched: controller-manager steady-state RSS", func(r *Report) { r.Planes[3].SteadyRSS = 106 << 20 }},
		// The live heap, when measured, decides over RSS.
		{"patched: controller-manager steady-state RSS", func(r *Report) { r.Planes[2].SteadyHeap, r.Planes[3].SteadyHeap = 50<<20, 53<<20 }},
		{"patched beats pristine+restart on p99 recovery (on-time)", func(r *Report) { r.Runs[2].Recovery.P99 = 2 * time.Second }},
		{"patched beats pristine+restart on member requests (on-time)", func(r *Report) { r.Runs[1].Members.Total = 900 }},
		{"patched: recovery time grows no worse than linearly", func(r *Report) { r.Runs[5].Recovery.P99 = NotRecovered }},
		// 3 s at K=10 allows (3 s + one poll) × 5 = 17.5 s at K=50.
		{"patched: recovery time grows no worse than linearly", func(r *Report) { r.Runs[5].Recovery.P99 = 18 * time.Second }},
	} {
		r := goodReport()
		tc.spoil(r)
		r.Judge()
		if v := verdict(t, r, tc.target); v.Met {
			t.Errorf("%s: met (%s), want missed", tc.target, v.Detail)
		}
	}
	// The late-secret storm's persisted 401s are counted apart.
	r := goodReport()
	late := run(50, LateSecret, Patched, 9*time.Second, 400, 30, Credentials{Component: ControllerManager, Served: true, Persisted: 7})
	r.Runs = append(r.Runs, late)
	r.Judge()
	if v := verdict(t, r, "patched: 0 persisted"); !v.Met || !strings.Contains(v.Detail, "late-secret storm's 7") {
		t.Errorf("late-secret persisted 401s: %+v", v)
	}
	r = goodReport()
	r.Runs[2].Recovery.P99 = 2 * time.Second
	r.Judge()
	if d := verdict(t, r, "patched beats pristine+restart on p99 recovery (on-time)").Detail; !strings.Contains(d, "K=10: 3.0 s vs 2.0 s (patched 1.5× slower, 1.0 s more)") {
		t.Errorf("a slower patched build must read as slower: %s", d)
	}
	// The metrics adapter's discovery fan-out is steady traffic: counted
	// apart, shown, and not what decides the requests verdict.
	r = goodReport()
	r.Runs[1].Members.Total = 1300
	r.Runs[1].Members.ByCall = map[string]int{discoveryFanOut: 1000}
	r.Judge()
	if v := verdict(t, r, "patched beats pristine+restart on member requests (on-time)"); !v.Met || !strings.Contains(v.Detail, "K=10: 300 vs 900 (-67%; with the discovery fan-out 1300 vs 900, +44%)") {
		t.Errorf("discovery fan-out counted apart: %+v", v)
	}
	r = goodReport()
	r.Runs[1].Members.Total = 1300
	r.Runs[1].Members.ByCall = map[string]int{"karmada-controller-manager get (non-resource)": 1000}
	r.Judge()
	if v := verdict(t, r, "patched beats pristine+restart on member requests (on-time)"); v.Met {
		t.Errorf("only the metrics adapter's discovery is counted apart, not another component's non-resource requests: %+v", v)
	}
	// A noisy RSS reading does not miss the target when the live heaps
	// agree.
	r = goodReport()
	r.Planes[3].SteadyRSS = 110 << 20
	r.Planes[2].SteadyHeap, r.Planes[3].SteadyHeap = 50<<20, 51<<20
	r.Judge()
	if v := verdict(t, r, "patched: controller-manager steady-state RSS"); !v.Met || !strings.Contains(v.Detail, "live heap after a forced GC: patched 51.0 MiB, pristine 50.0 MiB (+2.0%") {
		t.Errorf("live heap decides: %+v", v)
	}
	one := &Report{StatusPeriod: 2 * time.Second, Ks: []int{10}}
	one.Judge()
	if v := verdict(t, one, "patched: recovery time grows"); v.Met {
		t.Errorf("one K makes no curve: %+v", v)
	}
}

func TestReportWrite(t *testing.T) {
	r := goodReport()
	r.StandIns = []string{"members share kube-apiservers"}
	r.Profiles = []Profile{{K: 50, Kind: "cpu", File: "cm.pprof", Top: []string{"flat  flat%", "1s 50% runtime.scanobject"}}}
	r.Judge()
	dir := t.TempDir()
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "scale.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| patched: p99 recovery ≤ one status period + 2 s | **met** |",
		"## K = 10 (wall time 1m0s)",
		"### on-time storm, K = 10 (3 member kube-apiservers)",
		"| | pristine | pristine+restart | patched |",
		"| members recovered | 0 / 1 (timeout 60.0 s) | 10 / 10 (timeout 60.0 s) | 10 / 10 (timeout 60.0 s) |",
		"| recovery p50 / p99 / max | not recovered / not recovered / not recovered | 4.0 s / 8.0 s / 8.0 s | 1.5 s / 3.0 s / 3.0 s |",
		"| member apiservers: by verb | get 600, list 400 | get 700, list 200 | get 280, list 20 |",
		"| member apiservers: lists by cause (after 401: the credential; watch cut: the restart; new informer: just started) | watch cut 400 | watch cut 200 | watch cut 20 |",
		"| member apiservers: lists after a 401, by component and resource | none | none | none |",
		"| karmada-controller-manager: Secret re-reads per member (membercred) | n/a | n/a | 1 |",
		"| 10 | 3.0 s | 8.0 s | 1.0 s | – |",
		"| controller-manager → karmada-apiserver through its client (events apart), and the least time that takes at 40 QPS, burst 60 |",
		"| 50 | 3.0 s | 8.0 s | 1.0 s | 0 ms (since K = 10) |",
		"1s 50% runtime.scanobject",
		"- members share kube-apiservers",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("scale.md lacks %q:\n%s", want, md)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "scale.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Runs) != len(r.Runs) || back.Runs[1].Recovery.P99 != 3*time.Second || len(back.Verdicts) != len(r.Verdicts) ||
		back.Runs[1].Members.ListCauses[CauseWatchCut]["karmada-search deployments"] != 20 {
		t.Errorf("scale.json does not round-trip: %+v", back.Runs[1])
	}
}

func TestMergeKeepsOtherFleetSizes(t *testing.T) {
	old := goodReport() // K = 10 and 50
	old.Profiles = []Profile{{K: 50, Kind: "cpu"}}
	dir := t.TempDir()
	if err := old.Write(dir); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(filepath.Join(dir, "scale.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := &Report{StatusPeriod: 2 * time.Second, Ks: []int{100, 10}, Wall: map[int]time.Duration{100: time.Hour}}
	r.Runs = []Run{run(100, OnTime, Patched, 4*time.Second, 1, 1, once(100)), run(10, OnTime, Patched, 9*time.Second, 1, 1, once(10))}
	if err := r.Merge(back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Ks, []int{10, 50, 100}) {
		t.Errorf("Ks = %v", r.Ks)
	}
	// K = 10 was measured again: the old K = 10 runs are dropped.
	if p, _ := r.Find(10, OnTime, Patched); p.Recovery.P99 != 9*time.Second {
		t.Errorf("K=10 kept the old run: %+v", p.Recovery)
	}
	if _, ok := r.Find(50, OnTime, Restart); !ok || len(r.Profiles) != 1 || r.Wall[100] != time.Hour {
		t.Errorf("K=50 not merged: %d runs, %d profiles, wall %v", len(r.Runs), len(r.Profiles), r.Wall)
	}
	if _, err := ReadReport(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("reading a missing report gave no error")
	}
}

// Figures measured at another status period answer another question
// (the recovery bound is one status period + 2 s, and the cluster status
// controller's load is K over the period): a merge refuses them rather
// than put them in one table.
func TestMergeRefusesAnotherStatusPeriod(t *testing.T) {
	old := goodReport() // 2 s
	r := &Report{StatusPeriod: 10 * time.Second, Ks: []int{100}}
	err := r.Merge(old)
	if err == nil || !strings.Contains(err.Error(), "2s") || !strings.Contains(err.Error(), "10s") {
		t.Fatalf("Merge = %v, want an error naming both status periods", err)
	}
	if !slices.Equal(r.Ks, []int{100}) || len(r.Runs) != 0 {
		t.Errorf("a refused merge changed the report: Ks %v, %d runs", r.Ks, len(r.Runs))
	}
}

// Figures measured with other controller-manager flags are refused too.
func TestMergeRefusesOtherControllerManagerFlags(t *testing.T) {
	old := goodReport()
	r := &Report{StatusPeriod: old.StatusPeriod, Ks: []int{100}, ControllerManagerFlags: []string{"--rate-limiter-qps=100"}}
	if err := r.Merge(old); err == nil || !strings.Contains(err.Error(), "--rate-limiter-qps=100") {
		t.Fatalf("Merge = %v, want an error naming the flags", err)
	}
}

// A run whose lists were only counted, not classified (a report from
// before the classification, or no member audit log), says nothing about
// what caused them: the target is not judged met on it.
func TestJudgeRelistNeedsCauses(t *testing.T) {
	r := goodReport()
	r.Runs[5].Members.ListsByCause, r.Runs[5].Members.ListCauses = nil, nil
	r.Judge()
	if v := verdict(t, r, "patched: no relist"); v.Met || !strings.Contains(v.Detail, "not judged") {
		t.Errorf("lists without causes: %+v, want missed and not judged", v)
	}
}

// The causes decide; the control's count is shown beside them.
func TestJudgeRelistByCause(t *testing.T) {
	r := goodReport()
	r.Runs[5].Members.Lists = 30
	r.Runs[5].Members.ListsByCause = map[string]int{CauseWatchCut: 20, CauseNewInformer: 6, CauseReplay: 2, CauseOther: 2}
	r.Judge()
	v := verdict(t, r, "patched: no relist")
	if !v.Met || !strings.Contains(v.Detail, "0 of 30 member lists after a 401") || !strings.Contains(v.Detail, "by cause: watch cut 20, new informer 6, other 2, replay of a 401 2") ||
		!strings.Contains(v.Detail, "control (members restarted, nothing rotated): 20 lists against 30, +50%") {
		t.Errorf("more lists than the control, none after a 401: %+v", v)
	}
	r = goodReport()
	r.Runs[5].Members.ListsByCause = map[string]int{CauseWatchCut: 18, CauseAfter401: 2}
	r.Runs[5].Members.ListCauses = map[string]map[string]int{CauseAfter401: {"karmada-metrics-adapter nodes": 2}}
	r.Judge()
	if v := verdict(t, r, "patched: no relist"); v.Met || !strings.Contains(v.Detail, "2 of 20 member lists after a 401 that reached its caller (karmada-metrics-adapter nodes 2)") {
		t.Errorf("two lists after a 401, as many as the control: %+v", v)
	}
	r = goodReport()
	r.Runs = slices.DeleteFunc(r.Runs, func(run Run) bool { return run.Storm == Control })
	r.Judge()
	if v := verdict(t, r, "patched: no relist"); !v.Met || !strings.Contains(v.Detail, "no control run") {
		t.Errorf("judged on the causes without a control: %+v", v)
	}
}

// Where the cores went: biggest first, each with its share of the CPU
// spent, and the total against what the window offered.
func TestMachineCPURow(t *testing.T) {
	got := MachineCPUShares(map[string]time.Duration{
		"karmada-apiserver":     20 * time.Second,
		"member kube-apiserver": 60 * time.Second,
		RestOfMachine:           500 * time.Millisecond,
		"karmada-search":        4 * time.Second,
		"the other fleet":       15 * time.Second,
		"the harness":           500 * time.Millisecond,
	}, 50*time.Second, 2)
	want := "100.0 s of 100.0 s (2 cores × 50.0 s): member kube-apiserver 60.0 s (60 %), karmada-apiserver 20.0 s (20 %), the other fleet 15.0 s (15 %), karmada-search 4.0 s (4 %), the harness 0.5 s (0 %), the rest of the machine 0.5 s (0 %)"
	if got != want {
		t.Errorf("MachineCPUShares =\n%s\nwant\n%s", got, want)
	}
	if got := MachineCPUShares(nil, time.Second, 2); got != "–" {
		t.Errorf("no reading: %q", got)
	}
}

// The token source also re-reads its Secret every 5 minutes
// (membercred.DefaultRefreshPeriod); when that falls due inside a storm's
// window a member reads twice, once for the rotation. Only that second
// read is excused, and only for a member whose periodic read fell due.
func TestJudgeSecretReadsExcuseOnlyADuePeriodicRead(t *testing.T) {
	for _, c := range []struct {
		reads float64
		due   bool
		want  bool
	}{{1, false, true}, {1, true, true}, {2, true, true}, {2, false, false}, {0, true, false}, {3, true, false}} {
		if got := OneReadPerRotation(c.reads, c.due); got != c.want {
			t.Errorf("OneReadPerRotation(%v, due %v) = %v, want %v", c.reads, c.due, got, c.want)
		}
	}
	const target = "patched: exactly one Secret read per member per rotation"
	set := func(due, ok int) *Report {
		r := goodReport()
		for i, run := range r.Runs {
			if run.K == 50 && run.Storm == OnTime && run.Variant == Patched {
				r.Runs[i].Credentials[0] = Credentials{Component: ControllerManager, Served: true, ReadsMin: 1, ReadsMax: 2, MembersRead1: 48, PeriodicDue: due, MembersOnePerRotation: ok}
			}
		}
		r.Judge()
		return r
	}
	if v := verdict(t, set(2, 50), target); !v.Met || !strings.Contains(v.Detail, "2 more read again when their periodic re-read fell due") {
		t.Errorf("two periodic reads due and taken: %+v", v)
	}
	if v := verdict(t, set(0, 48), target); v.Met {
		t.Errorf("two members read twice with no periodic read due: %+v", v)
	}
}

// Linear growth is judged on the curve's slope: the recovery time each
// further member adds may not grow from one segment to the next beyond
// the quantisation of the polls. With two sizes there is one segment, and
// growth is judged against proportion from the smaller.
func TestGrowsLinearly(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		name   string
		points []CurvePoint
		want   bool
	}{
		{"linear with a fixed cost", []CurvePoint{{10, 2500 * time.Millisecond}, {50, 8900 * time.Millisecond}, {100, 16900 * time.Millisecond}}, true},
		{"flat", []CurvePoint{{10, 2 * s}, {50, 2 * s}, {100, 2 * s}}, true},
		{"within a poll at each end", []CurvePoint{{10, 2500 * time.Millisecond}, {50, 8900 * time.Millisecond}, {100, 19 * s}}, true},
		{"the slope doubles", []CurvePoint{{10, 2500 * time.Millisecond}, {50, 8900 * time.Millisecond}, {100, 27 * s}}, false},
		{"two sizes, proportional", []CurvePoint{{10, 3 * s}, {50, 17 * s}}, true},
		{"two sizes, beyond proportion", []CurvePoint{{10, 3 * s}, {50, 18 * s}}, false},
		{"unordered", []CurvePoint{{100, 27 * s}, {10, 2500 * time.Millisecond}, {50, 8900 * time.Millisecond}}, false},
		{"one not recovered", []CurvePoint{{10, 2 * s}, {50, NotRecovered}}, false},
		{"one size", []CurvePoint{{10, 2 * s}}, false},
	} {
		got, why := GrowsLinearly(c.points)
		if got != c.want || why == "" {
			t.Errorf("%s: GrowsLinearly = %v (%s), want %v", c.name, got, why, c.want)
		}
	}
	_, why := GrowsLinearly([]CurvePoint{{10, 2500 * time.Millisecond}, {50, 8900 * time.Millisecond}, {100, 27 * s}})
	for _, want := range []string{"K=50→100: 362 ms", "K=10→50: 160 ms", "allowed 205 ms"} {
		if !strings.Contains(why, want) {
			t.Errorf("GrowsLinearly's reason %q does not say %q", why, want)
		}
	}
}

// Write leaves no temporary file beside the report (it writes aside and
// renames; a failed write removes its temporary file).
func TestWriteLeavesOnlyTheReport(t *testing.T) {
	dir := t.TempDir()
	if err := goodReport().Write(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{P99Chart, RequestsChart, "scale.json", "scale.md"}) {
		t.Errorf("Write left %v", names)
	}
}
