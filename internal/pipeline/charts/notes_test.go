package charts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkerOperatorNotesSayWhatFailoverNeeds: the NOTES for a secondary hub
// do not call following ON as if it worked: no released KubeSlice controller
// publishes status.activeController, so the worker reads no_claim from every
// hub and never switches. They say what it needs, how to see that state
// (kubeslice_worker_hub_claim_state) and that an empty claim proves only the
// credential, not that failover is covered. (helm prints NOTES only when it
// reaches a cluster, so the template's text is read.)
func TestWorkerOperatorNotesSayWhatFailoverNeeds(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "charts", "worker-operator", "templates", "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, failover, ok := strings.Cut(string(data), "{{- else }}")
	if !ok {
		t.Fatal("NOTES.txt has no branch for a configured secondary hub")
	}
	for _, want := range []string{
		"status.activeController",
		"no released KubeSlice controller",
		`kubeslice_worker_hub_claim_state{state="no_claim"} 1`,
		"does not mean failover is covered",
	} {
		if !strings.Contains(failover, want) {
			t.Errorf("NOTES for a secondary hub lack %q", want)
		}
	}
	for _, bad := range []string{"both prove the credential", "Hub failover following is ON:"} {
		if strings.Contains(failover, bad) {
			t.Errorf("NOTES for a secondary hub say %q", bad)
		}
	}
}

// TestWorkerOperatorNotesStateTheGuardRule: the guard trips on Threshold
// persisting 401s within Window AND after MinDuration plus a per-pod jitter of
// up to half of it (pkg/membercred's OwnCredentialGuard); NOTES that named only
// the count and the window promised a faster exit than the worker makes.
func TestWorkerOperatorNotesStateTheGuardRule(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "charts", "worker-operator", "templates", "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"{{ .threshold }} persisting 401s in a row span at most {{ .window }}",
		"at least {{ .minDuration }} plus a random delay of up to half of it per pod",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("NOTES.txt does not say %q", want)
		}
	}
}
