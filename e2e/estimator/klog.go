package estimator

import (
	"regexp"
	"time"
)

// klogHeader is the start of a klog text line: severity, MMDD and the
// wall-clock time to the microsecond ("E1207 07:36:49.028753").
var klogHeader = regexp.MustCompile(`^[IWEF](\d{4} \d{2}:\d{2}:\d{2}\.\d{6}) `)

// klogTime is when a klog line was logged, in loc (the estimator's local
// time zone, the test's), in the year of now; false for a line without a
// klog header. A line logged on 31 December read on 1 January is put in
// the previous year.
func klogTime(line string, now time.Time, loc *time.Location) (time.Time, bool) {
	m := klogHeader.FindStringSubmatch(line)
	if m == nil {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation("0102 15:04:05.000000", m[1], loc)
	if err != nil {
		return time.Time{}, false
	}
	t = t.AddDate(now.In(loc).Year()-t.Year(), 0, 0)
	if t.After(now.Add(24 * time.Hour)) {
		t = t.AddDate(-1, 0, 0)
	}
	return t, true
}
