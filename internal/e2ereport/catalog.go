package e2ereport

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Row is one build a scenario runs against ("patched", "pristine") and
// what that build must show there.
type Row struct {
	Binary   string
	Expected Result
	// Timeline: the build's run marks the scenario's events on one clock
	// (Run.Mark: rotation, first failure, recovery), and Timelines draws
	// them, a track per build. A catalogue entry sets it with
	// timeline(rows), so that its positional {name, rows} stays as it is.
	Timeline bool
}

// Planned is a scenario a suite defines: its name and its rows.
type Planned struct {
	Name string
	Rows []Row
}

// Catalog is every scenario each suite defines, by suite, and what each
// row must show. It is the one list both ends use: Recorder.Begin fails a
// row whose suite, name and binary are not here (so a suite cannot add or
// rename a scenario without this list following) and gives every row the
// expected outcome listed here (a suite does not choose what its own rows
// must show); the release gate and `e2e-report --strict` require a row for
// every entry (so a partial run, E2E_RUN, or a scenario that silently
// stopped running cannot pass for a whole one) and count a row whose
// expected outcome is not the one listed here as unmet (Scenario.Met).
var Catalog = map[string][]Planned{
	"karmada-control-plane": {
		{"propagation", both},
		{"rotation", timeline(both)},
		{"late-secret", patchedOnly},
		{"repeated-rotation", patchedOnly},
		{"repeated-restart", pristineControl},
		{"two-members", both},
		{"search", both},
		{"metrics", both},
		{"own-credential", both},
		{"ca-rotation-overlap", timeline(both)},
		{"ca-rotation-replaced", timeline(both)},
		{"search-ca-rotation", timeline(both)},
		{"metrics-ca-rotation", timeline(both)},
		{"search-ca-rotation-overlap", timeline(both)},
		{"metrics-ca-rotation-overlap", timeline(both)},
		{"ca-rotation-lists", both},
		{"secret-reads", patchedOnly},
		{"agent-rotation", timeline(both)},
		{"agent-cert-rotation", timeline(both)},
		{"agent-own-credential", patchedOnly},
	},
	"worker-hub-failover": {
		{"secondary unset: connects to the primary, never contacts the secondary", patchedOnly},
		{"secondary unset: the same hub requests as pristine v1.6.4 (audit log)", patchedOnly},
		{"failover: both hubs name hub-b; exit 0, restart, connect to hub-b", patchedOnly},
		{"failover (pristine upstream): both hubs name hub-b", pristineOnly},
		{"a claim naming an unconfigured endpoint is ignored", patchedOnly},
		{"a hung secondary does not delay startup beyond the probe timeout", patchedOnly},
		{"a flapping claim causes no restart", patchedOnly},
		{"the Standby rejects the worker's credential: visible in metrics before any failover", patchedOnly},
		{"hubs disagree: the fresher claim (hub-a) wins over a stale Standby copy", patchedOnly},
		{"hub CA rotation: hub-a restarted with a new CA, CA file swapped (..data); reconnects without a restart, then follows failover", timeline(patchedOnly)},
		{"hub CA rotation (pristine upstream): hub-a restarted with a new CA, CA file swapped (..data)", pristineOnly},
	},
	"worker-chart-rbac": {
		{"chart RBAC: caches sync, no 403 on the worker cluster or hub-a", patchedOnly},
		{"chart RBAC (pristine upstream role.yaml): 403s, caches never sync", pristineOnly},
	},
	"node": {
		{"a pod runs and is Ready", patchedOnly},
		{"a container that exits is restarted by the kubelet", patchedOnly},
		{"a pod's connection out of the node's namespace fails at once (unreachable)", patchedOnly},
		{"the host is left as it was (iptables, netns, links, cgroups, sysctls)", patchedOnly},
	},
	"worker-node": {
		{"helm install, two hubs: Ready; promote hub-b: exit, the kubelet restarts it, it talks to hub-b", patchedOnly},
		{"helm install, secondary unset: Ready, 5 min with restartCount 0 and no forbidden in its log", patchedOnly},
		{"drop-in: pristine v1.6.4 image, helm upgrade to holdfast's (defaults), helm rollback: Ready, no restart, securityContext in /proc", patchedOnly},
	},
	"karmada-node": {
		{"helm install of the Karmada chart (host mode): every pod Running and Ready", patchedOnly},
		{"the deployed chart: a member joined in Push mode is Ready and a propagated ConfigMap reaches it", patchedOnly},
		{"rotation through the deployed chart: member1's token rotated and revoked, member restarted; an update lands on member1 without a restart", timeline(both)},
		{"CA rotation through the deployed chart (overlap): old and new CA in the Secret, member restarted on the new CA; an update lands without a restart", timeline(patchedOnly)},
		{"drop-in: upstream's controller-manager image, helm upgrade to holdfast's (defaults), helm rollback: every pod Ready, no restart, /proc status as the chart's securityContext", patchedOnly},
		{"karmada-apiserver's audit log over the rotation flow: no request of any chart component answered 403", patchedOnly},
		{"own credential through the kubelet: the controller-manager's token revoked and a new one in its Secret; the guard exits, the kubelet restarts it, it works again", patchedOnly},
		{"scheduler estimator through the deployed chart: member1's client certificate rotated by helm upgrade (directory mount), the old one revoked, member1 restarted; MaxAvailableReplicas counts a new Node with no restart", patchedOnly},
		{"scheduler estimator through the deployed chart: its Secret rewritten with a token and member1's old and new CA, member1 restarted on the new CA; MaxAvailableReplicas counts a new Node with no restart", patchedOnly},
		{"scheduler estimator through the deployed chart: member1's token rotated in its Secret, the old one revoked, member1 restarted; MaxAvailableReplicas counts a new Node with no restart", patchedOnly},
		{"karmada-agent through the packaged chart (agent mode, the node's own cluster a Pull member): its client certificate rotated by helm upgrade, the old one expired; an update still lands, no restart", patchedOnly},
		{"karmada-agent's credential rejected for good (its certificate expired, none renewed): the guard exits, the kubelet restarts it; a new certificate in its Secret, it applies Work again in the same pod", patchedOnly},
	},
	"karmada-scheduler-estimator": {
		{"token-rotation", timeline(both)},
		{"ca-rotation", timeline(both)},
		{"cert-rotation", timeline(both)},
		{"max-available-replicas", append(slices.Clone(patchedOnly), pristineControl...)},
	},
	"worker-own-credential": {
		{"a revoked own credential: the worker exits with the guard's line", patchedOnly},
		{"one transient 401 (token rotated under the worker) does not make it exit", patchedOnly},
		{"an unknown OWN_CREDENTIAL_GUARD_ACTION stops the worker at startup with one line", patchedOnly},
	},
}

// The rows a scenario can have.
var (
	// both: the patched build shows the fix and the pristine one the bug it
	// fixes, which proves the scenario detects it.
	both = []Row{{Binary: "patched", Expected: Pass}, {Binary: "pristine", Expected: RedAsExpected}}
	// patchedOnly: a behaviour of the patched build alone (a new feature,
	// the drop-in and rollback, an edge the pristine build has no part in).
	patchedOnly = []Row{{Binary: "patched", Expected: Pass}}
	// pristineOnly: the bug on the pristine build, where the patched build's
	// side is another scenario of the suite.
	pristineOnly = []Row{{Binary: "pristine", Expected: RedAsExpected}}
	// pristineControl: upstream's own behaviour, which a patched row is
	// compared with; the pristine build must pass it.
	pristineControl = []Row{{Binary: "pristine", Expected: Pass}}
)

// timeline is rows with every row drawn on the scenario's timeline (Row.Timeline).
func timeline(rows []Row) []Row {
	out := slices.Clone(rows)
	for i := range out {
		out[i].Timeline = true
	}
	return out
}

// setupPrefix starts the row a suite records when its environment could not
// be set up; it is a failure row, never a scenario of the catalogue.
const setupPrefix = "setup:"

// OptIn are scenarios a suite defines but runs only when asked (an
// environment variable the suite documents): a run may record them, and
// nothing requires them. The patched build's restart-only control of the
// repeated rounds (HOLDFAST_E2E_CONTROLS) shows the same as the pristine one
// and would add two minutes to every run.
var OptIn = map[string][]Planned{
	"karmada-control-plane": {
		{"repeated-restart", patchedOnly},
	},
}

// Catalogued reports whether the suite defines the scenario for the binary,
// required or opt-in. Suites outside the catalogue (a test's own) are not
// checked.
func Catalogued(suite, name, binary string) bool {
	_, listed := Expectation(suite, name, binary)
	_, ruled := Catalog[suite]
	return listed || !ruled || strings.HasPrefix(name, setupPrefix)
}

// Expectation is what the catalogue requires the scenario's row for the
// binary to show, required or opt-in; listed is false when the catalogue
// has no such row.
func Expectation(suite, name, binary string) (expected Result, listed bool) {
	for _, list := range [][]Planned{Catalog[suite], OptIn[suite]} {
		for _, p := range list {
			if p.Name != name {
				continue
			}
			for _, row := range p.Rows {
				if row.Binary == binary {
					return row.Expected, true
				}
			}
		}
	}
	return "", false
}

// OnTimeline reports whether the catalogue draws the scenario's row for
// the binary on a timeline (Row.Timeline), required or opt-in.
func OnTimeline(suite, name, binary string) bool {
	for _, list := range [][]Planned{Catalog[suite], OptIn[suite]} {
		for _, p := range list {
			if p.Name != name {
				continue
			}
			for _, row := range p.Rows {
				if row.Binary == binary {
					return row.Timeline
				}
			}
		}
	}
	return false
}

// Suites are the catalogue's suites, sorted.
func Suites() []string {
	var names []string
	for s := range Catalog {
		names = append(names, s)
	}
	sort.Strings(names)
	return names
}

// Missing lists "suite/name (binary)" for every catalogued scenario the
// report holds no row of, in catalogue order.
func (r Report) Missing() []string {
	have := map[string]bool{}
	for _, sc := range r.rows() {
		have[sc.Suite+"\x00"+sc.Name+"\x00"+sc.Binary] = true
	}
	var missing []string
	for _, suite := range Suites() {
		for _, p := range Catalog[suite] {
			for _, row := range p.Rows {
				if !have[suite+"\x00"+p.Name+"\x00"+row.Binary] {
					missing = append(missing, fmt.Sprintf("%s/%s (%s)", suite, p.Name, row.Binary))
				}
			}
		}
	}
	return missing
}
