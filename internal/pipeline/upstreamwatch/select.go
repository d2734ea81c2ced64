package upstreamwatch

import (
	"fmt"
	"sort"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// Candidate is a tag to try the series on, and why it was picked.
type Candidate struct {
	Version string `json:"version"`
	Reason  string `json:"reason"`
}

// Select picks, from the versions the proxy lists, the tags to try: per
// minor, its newest tag, when the minor is pinned and the tag is newer than
// its pin ("new patch"), or when the minor is above every pinned minor of
// the same major ("new minor"). Pre-releases count only with pre; a
// version that is not canonical semver (a pseudo-version the proxy may
// list, +incompatible) is ignored. The result is in semantic order.
func Select(pinned []pins.Pin, versions []string, pre bool) []Candidate {
	byMinor := map[string]pins.Pin{}
	newest := map[string]pins.Pin{} // per major
	for _, p := range pinned {
		byMinor[p.Minor()] = p
		major := semver.Major(p.Version)
		if n, ok := newest[major]; !ok || semver.Compare(p.Version, n.Version) > 0 {
			newest[major] = p
		}
	}
	top := map[string]string{} // minor -> its newest listed tag
	for _, v := range versions {
		if !semver.IsValid(v) || semver.Canonical(v) != v || semver.Build(v) != "" || module.IsPseudoVersion(v) {
			continue
		}
		if semver.Prerelease(v) != "" && !pre {
			continue
		}
		minor := semver.MajorMinor(v)
		if t, ok := top[minor]; !ok || semver.Compare(v, t) > 0 {
			top[minor] = v
		}
	}
	var out []Candidate
	for minor, v := range top {
		if p, ok := byMinor[minor]; ok {
			if semver.Compare(v, p.Version) > 0 {
				out = append(out, Candidate{v, fmt.Sprintf("new patch of pinned %s (pin %s)", minor, p.Version)})
			}
			continue
		}
		n, ok := newest[semver.Major(v)]
		if ok && semver.Compare(minor, n.Minor()) > 0 {
			out = append(out, Candidate{v, fmt.Sprintf("new minor %s (newest pin %s)", minor, n.Version)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return semver.Compare(out[i].Version, out[j].Version) < 0 })
	return out
}
