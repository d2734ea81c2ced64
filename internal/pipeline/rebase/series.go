package rebase

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// chooseSeries picks the series to try on version (a full semantic
// version): the series of the pin
// of the same minor, else that of the nearest pinned minor (the newer one
// on a tie, being closer to current upstream code), and says why.
func chooseSeries(up *pins.Upstream, version string) (dir, reason string, err error) {
	target := minorNumber(version)
	var best *pins.Pin
	bestDistance := 0
	for i := range up.Pins {
		p := &up.Pins[i]
		if semver.Major(p.Version) != semver.Major(version) {
			continue
		}
		d := abs(minorNumber(p.Version) - target)
		if best == nil || d < bestDistance || (d == bestDistance && semver.Compare(p.Version, best.Version) > 0) {
			best, bestDistance = p, d
		}
	}
	switch {
	case best == nil:
		return "", "", fmt.Errorf("upstream %s has no pin of major %s to take a series from; name one with --series", up.Name, semver.Major(version))
	case bestDistance == 0:
		return best.Series, fmt.Sprintf("the series of pinned %s", best.Version), nil
	default:
		return best.Series, fmt.Sprintf("no pin for %s; the series of the nearest pinned minor, %s", semver.MajorMinor(version), best.Version), nil
	}
}

func minorNumber(v string) int {
	_, minor, _ := strings.Cut(semver.MajorMinor(v), ".")
	n, _ := strconv.Atoi(minor)
	return n
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
