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
