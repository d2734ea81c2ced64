package e2ereport

import (
	"fmt"
	"sort"
	"strings"
)

// Planned is a scenario a suite defines: its name and the builds it runs
// against ("patched", "pristine").
type Planned struct {
	Name     string
	Binaries []string
}

// Catalog is every scenario each suite defines, by suite. It is the one
// list both ends use: Recorder.Begin fails a row whose suite, name and
// binary are not here (so a suite cannot add or rename a scenario without
// this list following), and the release gate and `e2e-report --strict`
// require a row for every entry (so a partial run, E2E_RUN, or a scenario
// that silently stopped running cannot pass for a whole one).
var Catalog = map[string][]Planned{
	"karmada-control-plane": {
		{"propagation", both},
		{"rotation", both},
		{"late-secret", patchedOnly},
		{"repeated-rotation", patchedOnly},
		{"repeated-restart", pristineOnly},
		{"two-members", both},
		{"search", both},
		{"metrics", both},
		{"own-credential", both},
		{"ca-rotation-overlap", both},
		{"ca-rotation-replaced", both},
		{"search-ca-rotation", both},
		{"metrics-ca-rotation", both},
		{"search-ca-rotation-overlap", both},
		{"metrics-ca-rotation-overlap", both},
		{"ca-rotation-lists", both},
		{"secret-reads", patchedOnly},
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
		{"hub CA rotation: hub-a restarted with a new CA, CA file swapped (..data); reconnects without a restart, then follows failover", patchedOnly},
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
		{"rotation through the deployed chart: member1's token rotated and revoked, member restarted; an update lands on member1 without a restart", both},
		{"CA rotation through the deployed chart (overlap): old and new CA in the Secret, member restarted on the new CA; an update lands without a restart", patchedOnly},
		{"drop-in: upstream's controller-manager image, helm upgrade to holdfast's (defaults), helm rollback: every pod Ready, no restart, /proc status as the chart's securityContext", patchedOnly},
		{"karmada-apiserver's audit log over the rotation flow: no request of any chart component answered 403", patchedOnly},
		{"own credential through the kubelet: the controller-manager's token revoked and a new one in its Secret; the guard exits, the kubelet restarts it, it works again", patchedOnly},
	},
	"worker-own-credential": {
		{"a revoked own credential: the worker exits with the guard's line", patchedOnly},
		{"one transient 401 (token rotated under the worker) does not make it exit", patchedOnly},
		{"an unknown OWN_CREDENTIAL_GUARD_ACTION stops the worker at startup with one line", patchedOnly},
	},
}

var (
	both         = []string{"patched", "pristine"}
	patchedOnly  = []string{"patched"}
	pristineOnly = []string{"pristine"}
)

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
	planned, ok := Catalog[suite]
	if !ok || strings.HasPrefix(name, setupPrefix) {
		return true
	}
	for _, p := range append(append([]Planned(nil), planned...), OptIn[suite]...) {
		if p.Name == name {
			for _, b := range p.Binaries {
				if b == binary {
					return true
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
	for _, s := range r.Suites {
		for _, sc := range s.Scenarios {
			have[s.Suite+"\x00"+sc.Name+"\x00"+sc.Binary] = true
		}
	}
	var missing []string
	for _, suite := range Suites() {
		for _, p := range Catalog[suite] {
			for _, b := range p.Binaries {
				if !have[suite+"\x00"+p.Name+"\x00"+b] {
					missing = append(missing, fmt.Sprintf("%s/%s (%s)", suite, p.Name, b))
				}
			}
		}
	}
	return missing
}
