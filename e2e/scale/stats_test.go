package scale

import (
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	s := func(ds ...int) []time.Duration {
		out := make([]time.Duration, len(ds))
		for i, d := range ds {
			out[i] = time.Duration(d) * time.Second
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", s(7), 99, 7 * time.Second},
		{"p50 of four is the second", s(1, 2, 3, 4), 50, 2 * time.Second},
		{"p99 of ten is the slowest", s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Second},
		{"p50 of ten is the fifth", s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 50, 5 * time.Second},
		{"p0 is the fastest", s(1, 2, 3), 0, time.Second},
	} {
		if got := Percentile(tc.sorted, tc.p); got != tc.want {
			t.Errorf("%s: Percentile(%v, %v) = %v, want %v", tc.name, tc.sorted, tc.p, got, tc.want)
		}
	}
	// p99 of 200: rank 198, so the two slowest are above it.
	var many []time.Duration
	for i := 1; i <= 200; i++ {
		many = append(many, time.Duration(i)*time.Millisecond)
	}
	if got := Percentile(many, 99); got != 198*time.Millisecond {
		t.Errorf("p99 of 1..200 ms = %v, want 198ms", got)
	}
}

func TestSummarizeCountsMembersThatDidNotRecover(t *testing.T) {
	times := []time.Duration{3 * time.Second, NotRecovered, time.Second, 2 * time.Second}
	s := Summarize(times)
	if s.Members != 4 || s.Recovered != 3 {
		t.Fatalf("Summarize = %+v, want 4 members, 3 recovered", s)
	}
	if s.P50 != 2*time.Second {
		t.Errorf("p50 = %v, want 2s", s.P50)
	}
	if s.P99 != NotRecovered || s.Max != NotRecovered {
		t.Errorf("p99 %v, max %v: a member that never recovered must show at the top", s.P99, s.Max)
	}
	if times[1] != NotRecovered || times[0] != 3*time.Second {
		t.Errorf("Summarize reordered its input: %v", times)
	}
	if got := FormatDuration(s.P99); got != "not recovered" {
		t.Errorf("FormatDuration(NotRecovered) = %q", got)
	}
	if got := FormatDuration(1500 * time.Millisecond); got != "1.5 s" {
		t.Errorf("FormatDuration(1.5s) = %q", got)
	}
	if z := Summarize(nil); z.Members != 0 || z.P99 != 0 {
		t.Errorf("Summarize(nil) = %+v", z)
	}
}
