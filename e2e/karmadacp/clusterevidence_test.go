package karmadacp

import (
	"strings"
	"testing"
)

func TestEvidenceOfOneCluster(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		member1    bool
	}{
		{"member1's conflict", updateConflict, true},
		{"member2's conflict", strings.ReplaceAll(updateConflict, "member1", "member2"), false},
		// A name that only starts like member1's.
		{"member10's conflict", strings.ReplaceAll(updateConflict, "member1", "member10"), false},
	} {
		if got := UpdateConflictIn("member1").MatchString(tc.line); got != tc.member1 {
			t.Errorf("%s: UpdateConflictIn(member1) matched=%v, want %v", tc.name, got, tc.member1)
		}
	}
	for _, tc := range []struct {
		name, line string
		member1    bool
	}{
		{"member1's Work", workSyncFailed, true},
		{"member2's Work", strings.ReplaceAll(workSyncFailed, "member1", "member2"), false},
		{"member10's Work", strings.ReplaceAll(workSyncFailed, "member1", "member10"), false},
	} {
		if got := WorkSyncFailedIn("member1").MatchString(tc.line); got != tc.member1 {
			t.Errorf("%s: WorkSyncFailedIn(member1) matched=%v, want %v", tc.name, got, tc.member1)
		}
	}
}
