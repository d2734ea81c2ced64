package scale

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Storm is the stimulus of a run.
type Storm string

const (
	// OnTime: every member's Secret gets its new token, then every old
	// token is revoked, all at once, then the member kube-apiservers
	// restart (as a signing-key rotation restarts them), so that every
	// watch reconnects.
	OnTime Storm = "on-time"
	// LateSecret: every old token revoked and the members restarted
	// first; the Secrets get the new tokens afterwards, spread over
	// LateSpread.
	LateSecret Storm = "late-secret"
	// Control: the members restarted with nothing rotated, the baseline
	// for what a restart costs on its own (its relists above all).
	Control Storm = "control"
)

// LateSpread is how long the late-Secret storm takes to write every
// Secret (issue 24: spread over 10 s).
const LateSpread = 10 * time.Second

// Variant is the build and what the operator does.
type Variant string

const (
	Pristine Variant = "pristine"
	// Restart is pristine with the workaround: the three binaries that
	// hold member clients restarted once the rotation is done.
	Restart Variant = "pristine+restart"
	Patched Variant = "patched"
)

// Variants are the report's columns, in order.
var Variants = []Variant{Pristine, Restart, Patched}

// Storms are the report's tables per K, in order.
var Storms = []Storm{OnTime, LateSecret, Control}

// Credentials are one component's membercred counters over a run, per
// member (Sub of two scrapes).
type Credentials struct {
	Component string `json:"component"`
	// Served is false for a binary with no membercred series (pristine).
	Served bool `json:"served"`
	// Secret re-reads (refreshes) per member: least, most, and how many
	// members read it exactly once.
	ReadsMin     float64 `json:"readsMin"`
	ReadsMax     float64 `json:"readsMax"`
	MembersRead1 int     `json:"membersReadOnce"`
	// PeriodicDue is how many members' periodic re-read (every
	// membercred.DefaultRefreshPeriod) fell due inside the window, and
	// MembersOnePerRotation how many read once for the rotation
	// (OneReadPerRotation).
	PeriodicDue           int `json:"periodicDue"`
	MembersOnePerRotation int `json:"membersOnePerRotation"`
	// 401s seen by the transport, per member at most and in all; the
	// recovered ones were replayed, the persisted ones reached a caller.
	UnauthorizedMax   float64 `json:"unauthorizedMax"`
	UnauthorizedTotal float64 `json:"unauthorizedTotal"`
	Recovered         float64 `json:"recovered"`
	Persisted         float64 `json:"persisted"`
}

// OneReadPerRotation says whether a member's Secret reads over a storm
// are one for the rotation: exactly one, or two when its periodic re-read
// fell due inside the window (the token source re-reads its Secret every
// membercred.DefaultRefreshPeriod whatever happens, and a storm 2–3 min
// after the last one meets it for the members read around then).
func OneReadPerRotation(reads float64, periodicDue bool) bool {
	return reads == 1 || (periodicDue && reads == 2)
}

// Run is one storm of one variant at one fleet size.
type Run struct {
	K          int     `json:"k"`
	APIServers int     `json:"memberAPIServers"`
	Storm      Storm   `json:"storm"`
	Variant    Variant `json:"variant"`
	// Stimulus is how long the rotation took: every Secret written and
	// every old token rejected (on-time), every old token rejected
	// (late-secret), from the first write or revocation.
	Stimulus time.Duration `json:"stimulus"`
	// Timeout bounds the wait for recovery; Window is the measured
	// window, from the stimulus to the last member recovered or the
	// timeout.
	Timeout  time.Duration `json:"timeout"`
	Window   time.Duration `json:"window"`
	Recovery Summary       `json:"recovery"`
	// The parts of recovery, each from the same t0: the new template on
	// the member, its status aggregated, the search cache serving it.
	Propagated Summary `json:"propagated"`
	Aggregated Summary `json:"aggregated"`
	Searched   Summary `json:"searched"`
	// Members sums the member kube-apiservers' audit logs, Karmada is
	// karmada-apiserver's, over Window, less the harness's requests.
	Members Requests `json:"members"`
	Karmada Requests `json:"karmada"`
	// SecretRequests are the controller-manager's get, list and watch
	// requests for the member Secrets in karmada-apiserver's audit log
	// (both builds read them through an informer, so mostly none).
	SecretRequests int           `json:"secretRequests"`
	Credentials    []Credentials `json:"credentials"`
	// CPU and PeakRSS are the controller-manager's over Window (every
	// process of it, for the restart workaround).
	CPU     time.Duration `json:"cpu"`
	PeakRSS int64         `json:"peakRSS"`
	// MachineCPU is the CPU time every part of the run spent over the
	// window, read from /proc at its start and end (CPUByGroup): where
	// the machine's two cores went while the fleet recovered.
	MachineCPU map[string]time.Duration `json:"machineCPU,omitempty"`
	// MachineCPUSpan is the time between those two readings: the
	// window, and the last poll after it.
	MachineCPUSpan time.Duration `json:"machineCPUSpan,omitempty"`
	// Cores is how many CPUs the machine had.
	Cores int `json:"cores,omitempty"`
	// Load is the machine's 1-minute load average when the storm began:
	// the machine is shared, and the times are only as good as it was
	// idle.
	Load  float64  `json:"load"`
	Notes []string `json:"notes,omitempty"`
}

// Plane is what one control plane showed before its storms.
type Plane struct {
	K     int           `json:"k"`
	Build Variant       `json:"build"`
	Setup time.Duration `json:"setup"`
	// SteadyRSS is the controller-manager's RSS once every member's
	// workload was propagated, aggregated and searchable, after a settle.
	SteadyRSS int64 `json:"steadyRSS"`
	// SteadyHeap is its live heap then (HeapAlloc after a forced
	// collection, the median of a few readings): RSS moves by ±10 % with
	// where the collector stands, so the builds' difference per member is
	// judged on this when it was measured. 0 in reports from before it.
	SteadyHeap int64 `json:"steadyHeap,omitempty"`
}

// Profile is a pprof profile the report keeps.
type Profile struct {
	K    int      `json:"k"`
	Kind string   `json:"kind"`
	File string   `json:"file"`
	Top  []string `json:"top"`
}

// Verdict is one target of issue 24, met or missed and why.
type Verdict struct {
	Target string `json:"target"`
	Met    bool   `json:"met"`
	Detail string `json:"detail"`
}

// Report is the whole measurement.
type Report struct {
	Generated time.Time `json:"generated"`
	// Wall is how long each K took, control planes included.
	Wall map[int]time.Duration `json:"wall"`
	// StatusPeriod is the controller-manager's
	// --cluster-status-update-frequency.
	StatusPeriod time.Duration `json:"statusPeriod"`
	// ControllerManagerFlags were added to both builds' controller-manager
	// (ControllerManagerFlagsEnv); none is upstream's defaults.
	ControllerManagerFlags []string  `json:"controllerManagerFlags,omitempty"`
	Ks                     []int     `json:"ks"`
	StandIns               []string  `json:"standIns"`
	Notes                  []string  `json:"notes,omitempty"`
	Planes                 []Plane   `json:"planes"`
	Runs                   []Run     `json:"runs"`
	Profiles               []Profile `json:"profiles,omitempty"`
	Verdicts               []Verdict `json:"verdicts"`
}

// Find returns the run of k, storm and variant.
func (r *Report) Find(k int, s Storm, v Variant) (Run, bool) {
	for _, run := range r.Runs {
		if run.K == k && run.Storm == s && run.Variant == v {
			return run, true
		}
	}
	return Run{}, false
}

func (r *Report) plane(k int, b Variant) (Plane, bool) {
	for _, p := range r.Planes {
		if p.K == k && p.Build == b {
			return p, true
		}
	}
	return Plane{}, false
}

func (c Credentials) reads() string {
	if !c.Served {
		return "n/a"
	}
	if c.ReadsMin == c.ReadsMax {
		return fmt.Sprintf("%g", c.ReadsMin)
	}
	return fmt.Sprintf("%g–%g", c.ReadsMin, c.ReadsMax)
}

func (run Run) credentials(component string) (Credentials, bool) {
	for _, c := range run.Credentials {
		if c.Component == component {
			return c, true
		}
	}
	return Credentials{}, false
}

// ControllerManager is the component whose figures the targets name.
const ControllerManager = "karmada-controller-manager"

// Write writes dir/scale.json, the charts (P99Chart, RequestsChart) and
// dir/scale.md.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	// Both files are written aside and renamed into place, the
	// Markdown last: a failure leaves the previous report whole, or at
	// worst a new scale.json beside the old scale.md, which
	// make scale-report renders again.
	if err := writeAside(dir, "scale.json", append(data, '\n')); err != nil {
		return err
	}
	if err := r.writeCharts(dir); err != nil {
		return err
	}
	return writeAside(dir, "scale.md", []byte(r.Markdown()))
}

// writeAside writes data to a temporary file in dir and renames it to
// name: a reader never sees half of it.
func writeAside(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// Markdown renders the report: the verdicts, then one table per K and
// storm with the variants as columns.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Scale: a member credential rotation storm (issue 24)\n\nGenerated %s. Status period (--cluster-status-update-frequency) %s.\n\n", r.Generated.UTC().Format(time.RFC3339), r.StatusPeriod)
	if len(r.ControllerManagerFlags) > 0 {
		fmt.Fprintf(&b, "**Not upstream's defaults:** both builds' controller-manager ran with `%s`.\n\n", strings.Join(r.ControllerManagerFlags, " "))
	}
	b.WriteString("## Targets\n\n| target | | detail |\n|---|---|---|\n")
	for _, v := range r.Verdicts {
		mark := "missed"
		if v.Met {
			mark = "met"
		}
		fmt.Fprintf(&b, "| %s | **%s** | %s |\n", v.Target, mark, v.Detail)
	}
	if curve := r.curve(); curve != "" {
		b.WriteString("\n## Recovery (p99) against K\n\n" + curve)
	}
	if figs := r.figures(); len(figs) > 0 {
		b.WriteString("\n## Curves\n\nThe on-time storm's p99 and the member kube-apiservers' requests (every request in their audit logs over the window, divided by K) per build; a point's tooltip holds its figure.\n\n")
		for i, f := range figs {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "![%s](%s)\n", f.alt, f.file)
		}
	}
	for _, k := range r.Ks {
		fmt.Fprintf(&b, "\n## K = %d", k)
		if w, ok := r.Wall[k]; ok {
			fmt.Fprintf(&b, " (wall time %s)", w.Round(time.Second))
		}
		b.WriteString("\n\n")
		for _, build := range []Variant{Pristine, Patched} {
			if p, ok := r.plane(k, build); ok {
				fmt.Fprintf(&b, "- %s control plane: set up in %s; controller-manager steady-state RSS %s (%s per member)", build, p.Setup.Round(time.Second), mib(p.SteadyRSS), kib(p.SteadyRSS/int64(max(k, 1))))
				if p.SteadyHeap > 0 {
					fmt.Fprintf(&b, ", live heap after a forced GC %s (%s per member)", mib(p.SteadyHeap), kib(p.SteadyHeap/int64(max(k, 1))))
				}
				b.WriteString("\n")
			}
		}
		for _, s := range Storms {
			r.table(&b, k, s)
		}
	}
	if len(r.Profiles) > 0 {
		b.WriteString("\n## Profiles\n\n")
		for _, p := range r.Profiles {
			fmt.Fprintf(&b, "- K = %d, %s: `%s`; top frames (flat):\n\n```\n%s\n```\n", p.K, p.Kind, p.File, strings.Join(p.Top, "\n"))
		}
	}
	b.WriteString("\n## Stand-ins\n\n")
	for _, s := range r.StandIns {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

// curve is the on-time p99 per K of patched and the restart workaround,
// the control's beside them, and what each further member added to the
// patched p99 since the previous K (GrowsLinearly judges that slope).
func (r *Report) curve() string {
	if len(r.Ks) < 2 {
		return ""
	}
	var b strings.Builder
	b.WriteString("| K | patched p99 | pristine+restart p99 | control (nothing rotated), patched p99 | patched: time each further member added |\n|---|---|---|---|---|\n")
	var prev *Run
	for _, k := range slices.Sorted(slices.Values(r.Ks)) {
		p, ok1 := r.Find(k, OnTime, Patched)
		w, ok2 := r.Find(k, OnTime, Restart)
		c, ok3 := r.Find(k, Control, Patched)
		if !ok1 && !ok2 {
			continue
		}
		per := "–"
		if ok1 && prev != nil && p.Recovery.P99 != NotRecovered && prev.Recovery.P99 != NotRecovered {
			per = fmt.Sprintf("%.0f ms (since K = %d)", (p.Recovery.P99-prev.Recovery.P99).Seconds()*1000/float64(k-prev.K), prev.K)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", k, cell(ok1, p.Recovery.P99), cell(ok2, w.Recovery.P99), cell(ok3, c.Recovery.P99), per)
		if ok1 {
			prev = &p
		}
	}
	return b.String()
}

func cell(ok bool, d time.Duration) string {
	if !ok {
		return "–"
	}
	return FormatDuration(d)
}

func (r *Report) table(b *strings.Builder, k int, s Storm) {
	var runs []Run
	var heads []string
	for _, v := range Variants {
		if run, ok := r.Find(k, s, v); ok {
			runs = append(runs, run)
			heads = append(heads, string(v))
		}
	}
	if len(runs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### %s storm, K = %d (%d member kube-apiservers)\n\n| | %s |\n|---|%s\n", s, k, runs[0].APIServers, strings.Join(heads, " | "), strings.Repeat("---|", len(runs)))
	row := func(name string, f func(Run) string) {
		cells := make([]string, len(runs))
		for i, run := range runs {
			cells[i] = f(run)
		}
		fmt.Fprintf(b, "| %s | %s |\n", name, strings.Join(cells, " | "))
	}
	row("stimulus (rotation wall time)", func(r Run) string { return FormatDuration(r.Stimulus) })
	row("members recovered", func(r Run) string {
		return fmt.Sprintf("%d / %d (timeout %s)", r.Recovery.Recovered, r.Recovery.Members, FormatDuration(r.Timeout))
	})
	row("recovery p50 / p99 / max", func(r Run) string {
		return fmt.Sprintf("%s / %s / %s", FormatDuration(r.Recovery.P50), FormatDuration(r.Recovery.P99), FormatDuration(r.Recovery.Max))
	})
	row("of which: template on the member p50 / p99", func(r Run) string { return p5099(r.Propagated) })
	row("of which: status aggregated p50 / p99", func(r Run) string { return p5099(r.Aggregated) })
	row("of which: search cache serving it p50 / p99", func(r Run) string { return p5099(r.Searched) })
	row("window measured", func(r Run) string { return FormatDuration(r.Window) })
	row("member apiservers: requests", func(r Run) string { return fmt.Sprint(r.Members.Total) })
	row("of which: karmada-metrics-adapter's discovery fan-out (GET /api, /apis of every member per discovery request)", func(r Run) string { return fmt.Sprint(r.Members.DiscoveryFanOut()) })
	row("member apiservers: requests less that fan-out", func(r Run) string { return fmt.Sprint(r.Members.Recovery()) })
	row("member apiservers: by verb", func(r Run) string { return verbs(r.Members.ByVerb) })
	row("member apiservers: lists (relists)", func(r Run) string { return fmt.Sprint(r.Members.Lists) })
	row("member apiservers: lists by cause (after 401: the credential; watch cut: the restart; new informer: just started)", func(r Run) string {
		if r.Members.ListsByCause == nil {
			return "not classified"
		}
		return verbs(r.Members.ListsByCause)
	})
	row("member apiservers: lists after a 401, by component and resource", func(r Run) string {
		if r.Members.ListsByCause == nil {
			return "not classified"
		}
		return verbs(r.Members.ListCauses[CauseAfter401])
	})
	row("member apiservers: 401s", func(r Run) string { return fmt.Sprint(r.Members.Unauthorized) })
	row("karmada-apiserver: requests", func(r Run) string { return fmt.Sprint(r.Karmada.Total) })
	row("karmada-apiserver: by verb", func(r Run) string { return verbs(r.Karmada.ByVerb) })
	row("karmada-apiserver: lists", func(r Run) string { return fmt.Sprint(r.Karmada.Lists) })
	qps, burst := ClientLimit(r.ControllerManagerFlags)
	row(fmt.Sprintf("controller-manager → karmada-apiserver through its client (events apart), and the least time that takes at %g QPS, burst %d", qps, burst), func(r Run) string {
		n := r.Karmada.ControllerManagerClientRequests()
		return fmt.Sprintf("%d; ≥ %s", n, FormatDuration(LeastClientTime(n, qps, burst)))
	})
	row("controller-manager requests for member Secrets (audit)", func(r Run) string { return strconv.Itoa(r.SecretRequests) })
	for _, c := range []string{ControllerManager, "karmada-search", "karmada-metrics-adapter"} {
		row(c+": Secret re-reads per member (membercred)", func(r Run) string {
			cr, ok := r.credentials(c)
			if !ok {
				return "–"
			}
			return cr.reads()
		})
		row(c+": 401s max per member / total / persisted", func(r Run) string {
			cr, ok := r.credentials(c)
			if !ok || !cr.Served {
				return "n/a"
			}
			return fmt.Sprintf("%g / %g / %g", cr.UnauthorizedMax, cr.UnauthorizedTotal, cr.Persisted)
		})
	}
	row("controller-manager CPU over the window", func(r Run) string { return formatSeconds(r.CPU.Seconds()) })
	row("CPU over the window, every process on the machine (/proc at its start and after its last poll)", func(r Run) string {
		span := r.MachineCPUSpan
		if span == 0 { // a report from before the span was kept
			span = r.Window
		}
		return MachineCPUShares(r.MachineCPU, span, r.Cores)
	})
	row("controller-manager peak RSS", func(r Run) string { return mib(r.PeakRSS) })
	row("machine load at the start (1-min average, 2 cores)", func(r Run) string { return strconv.FormatFloat(r.Load, 'f', 1, 64) })
	for _, run := range runs {
		for _, n := range run.Notes {
			fmt.Fprintf(b, "\n%s: %s\n", run.Variant, n)
		}
	}
}

func p5099(s Summary) string {
	if s.Members == 0 {
		return "–"
	}
	return FormatDuration(s.P50) + " / " + FormatDuration(s.P99)
}

// verbs lists counts by verb, most frequent first (ties by name).
func verbs(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// MachineCPUShares renders Run.MachineCPU: the CPU time spent against
// what cores × window offered, then each group, biggest first (ties by
// name), with its share of the time spent.
func MachineCPUShares(m map[string]time.Duration, window time.Duration, cores int) string {
	if len(m) == 0 {
		return "–"
	}
	var total time.Duration
	names := make([]string, 0, len(m))
	for n, d := range m {
		total += d
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %s (%.0f %%)", n, formatSeconds(m[n].Seconds()), 100*m[n].Seconds()/total.Seconds())
	}
	return fmt.Sprintf("%s of %s (%d cores × %s): %s", formatSeconds(total.Seconds()), formatSeconds(window.Seconds()*float64(cores)), cores, formatSeconds(window.Seconds()), strings.Join(parts, ", "))
}

func formatSeconds(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) + " s" }

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func kib(b int64) string { return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10)) }

// Merge adds what old holds for the fleet sizes r did not measure, so
// that separate runs (K=10 now, K=50,100 later) make one report. The
// verdicts are judged again over the whole. Figures of another status
// period are refused: the recovery bound and the status controller's load
// both depend on it.
func (r *Report) Merge(old *Report) error {
	if old.StatusPeriod != r.StatusPeriod {
		return fmt.Errorf("the report there was measured at status period %s and this run at %s: not merged (run every K at one period)", old.StatusPeriod, r.StatusPeriod)
	}
	if !slices.Equal(old.ControllerManagerFlags, r.ControllerManagerFlags) {
		return fmt.Errorf("the report there was measured with controller-manager flags %q and this run with %q: not merged", old.ControllerManagerFlags, r.ControllerManagerFlags)
	}
	for _, k := range old.Ks {
		if slices.Contains(r.Ks, k) {
			continue
		}
		r.Ks = append(r.Ks, k)
		if w, ok := old.Wall[k]; ok {
			if r.Wall == nil {
				r.Wall = map[int]time.Duration{}
			}
			r.Wall[k] = w
		}
		for _, p := range old.Planes {
			if p.K == k {
				r.Planes = append(r.Planes, p)
			}
		}
		for _, run := range old.Runs {
			if run.K == k {
				r.Runs = append(r.Runs, run)
			}
		}
		for _, p := range old.Profiles {
			if p.K == k {
				r.Profiles = append(r.Profiles, p)
			}
		}
	}
	slices.Sort(r.Ks)
	return nil
}

// ReadReport reads a scale.json Write wrote.
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("scale report %s: %w", path, err)
	}
	return &r, nil
}
