package vulnreport

import (
	"reflect"
	"testing"
)

func TestFixableReachable(t *testing.T) {
	r := &Report{Binaries: []BinaryReport{{
		Name: "karmada-controller-manager", MainModule: "github.com/karmada-io/karmada",
		Findings: []Finding{
			{OSV: "GO-2026-6603", Module: "golang.org/x/net", Version: "v0.58.0", Fixed: "v0.60.0", Reach: Reachable},
			{OSV: "GO-2026-6348", Module: "google.golang.org/grpc", Version: "v1.79.3", Fixed: "v1.83.1", Reach: Reachable},
			{OSV: "GO-2026-0001", Module: "stdlib", Version: "v1.27.3", Fixed: "v1.27.4", Reach: Reachable},
			{OSV: "GO-2024-2817", Module: "github.com/karmada-io/karmada", Version: "v1.18.3-0.20261204080407-dfb00591ccb5", Reach: Reachable},
			{OSV: "GO-2026-5005", Module: "golang.org/x/crypto", Version: "v0.47.0", Fixed: "v0.52.0", Reach: Imported},
			{OSV: "GO-2026-0002", Module: "example.com/m", Version: "v1.0.0", Fixed: "v1.0.1", Reach: Unknown},
		},
	}, {
		Name: "worker-operator", MainModule: "github.com/kubeslice/worker-operator",
		Findings: []Finding{{OSV: "GO-2026-6603", Module: "golang.org/x/net", Version: "v0.38.0", Fixed: "v0.60.0", Reach: Reachable}},
	}}}
	waivers := map[string]map[string]string{"github.com/karmada-io/karmada": {"GO-2026-6603": "needs go 1.26"}}
	got := r.FixableReachable(func(m, id string) bool { _, ok := waivers[m][id]; return ok })
	want := []string{
		"karmada-controller-manager: GO-2026-6348 in google.golang.org/grpc v1.79.3 (fixed in v1.83.1)",
		"karmada-controller-manager: GO-2026-0001 in stdlib v1.27.3 (fixed in v1.27.4)",
		// Karmada's waiver does not excuse the worker.
		"worker-operator: GO-2026-6603 in golang.org/x/net v0.38.0 (fixed in v0.60.0)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FixableReachable:\n got %q\nwant %q", got, want)
	}
}
