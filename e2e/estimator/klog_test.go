package estimator

import (
	"testing"
	"time"
)

func TestKlogTime(t *testing.T) {
	loc := time.UTC
	now := time.Date(2026, 12, 7, 8, 0, 0, 0, loc)
	got, ok := klogTime(`E1207 07:36:49.028753   22917 reflector.go:204] "Failed to watch"`, now, loc)
	if want := time.Date(2026, 12, 7, 7, 36, 49, 28753000, loc); !ok || !got.Equal(want) {
		t.Errorf("klogTime = %s, %v; want %s", got, ok, want)
	}
	newYear := time.Date(2027, 1, 1, 0, 0, 1, 0, loc)
	if got, ok := klogTime(`I1231 23:59:59.000000 1 x.go:1] "late"`, newYear, loc); !ok || got.Year() != 2026 {
		t.Errorf("a line of 31 December read on 1 January: %s, %v; want 2026", got, ok)
	}
	if _, ok := klogTime("panic: boom", now, loc); ok {
		t.Error("a line without a klog header was given a time")
	}
}
