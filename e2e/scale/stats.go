package scale

import (
	"math"
	"slices"
	"time"
)

// NotRecovered stands for a member that did not recover within the run's
// timeout: it sorts after every measured time, so a percentile that falls
// on it says so instead of hiding the member.
const NotRecovered = time.Duration(math.MaxInt64)

// Summary is the distribution of the members' times to recover.
type Summary struct {
	// Members is how many members were measured, Recovered how many
	// recovered within the timeout.
	Members   int `json:"members"`
	Recovered int `json:"recovered"`
	// P50, P99 and Max are nearest-rank percentiles over every member,
	// a member that did not recover counting as NotRecovered.
	P50 time.Duration `json:"p50"`
	P99 time.Duration `json:"p99"`
	Max time.Duration `json:"max"`
}

// Summarize summarises times, one per member, NotRecovered for a member
// that did not recover.
func Summarize(times []time.Duration) Summary {
	s := Summary{Members: len(times)}
	if len(times) == 0 {
		return s
	}
	sorted := slices.Clone(times)
	slices.Sort(sorted)
	for _, d := range sorted {
		if d != NotRecovered {
			s.Recovered++
		}
	}
	s.P50 = Percentile(sorted, 50)
	s.P99 = Percentile(sorted, 99)
	s.Max = sorted[len(sorted)-1]
	return s
}

// Percentile is the nearest-rank p-th percentile of sorted (ascending):
// the smallest value at least p percent of the values are at or below.
// Nearest rank, not interpolation, so that with fewer than a hundred
// members p99 is the slowest member rather than a value no member had.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

// FormatDuration renders d for the report: seconds with a tenth, or that
// the member did not recover.
func FormatDuration(d time.Duration) string {
	if d == NotRecovered {
		return "not recovered"
	}
	return formatSeconds(d.Seconds())
}
