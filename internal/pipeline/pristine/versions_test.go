package pristine_test

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestVersions(t *testing.T) {
	d, _ := setup(t)
	got, err := d.Versions(context.Background(), modPath)
	if err != nil {
		t.Fatalf("Versions: %v", err)
	}
	if !slices.Equal(got, []string{"v1.2.3"}) {
		t.Errorf("Versions = %v, want [v1.2.3]", got)
	}

	// The same settings that Download refuses are refused for listing:
	// the tags must come from where the download will be checked.
	for _, bad := range []string{"GONOSUMDB=example.com", "GOPRIVATE=example.com/*", "GOSUMDB=off"} {
		d := d
		d.Env = append(slices.Clone(d.Env), bad)
		name, _, _ := strings.Cut(bad, "=")
		if _, err := d.Versions(context.Background(), modPath); err == nil || !strings.Contains(err.Error(), name+"=") {
			t.Errorf("%s: err = %v, want a refusal naming it", bad, err)
		}
	}
}
