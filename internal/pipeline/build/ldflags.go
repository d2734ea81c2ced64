package build

import (
	"fmt"
	"strings"
	"time"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// Stamp is the provenance written into a binary.
type Stamp struct {
	// Version is the pin's VersionString, e.g. v1.18.2-holdfast.1.
	Version    string
	SeriesHash string // h1:
	Source     Source
}

// Value returns what a version variable of the given field receives.
func (s Stamp) Value(f pins.VersionField) (string, error) {
	switch f {
	case pins.FieldVersion:
		return s.Version, nil
	case pins.FieldCommit:
		return "holdfast:" + s.Source.Commit + ",series:" + ShortSeriesHash(s.SeriesHash), nil
	case pins.FieldShortCommit:
		return s.Source.ShortCommit, nil
	case pins.FieldTreeState:
		return s.Source.TreeState, nil
	case pins.FieldBuildDate:
		// The layout of `date -u +'%Y-%m-%dT%H:%M:%SZ'` in util.sh.
		return s.Source.Date.UTC().Format(time.RFC3339), nil
	case pins.FieldSeriesHash:
		return ShortSeriesHash(s.SeriesHash), nil
	}
	return "", fmt.Errorf("no value for version field %q", f)
}

// LDFlags returns the -ldflags value that sets v's variables in module.
// The go command splits -ldflags on spaces, so a value with a space is an
// error rather than a silently broken flag.
func LDFlags(module string, v *pins.VersionVars, s Stamp) (string, error) {
	if v == nil {
		return "", nil
	}
	var flags []string
	for _, vv := range v.Vars {
		value, err := s.Value(vv.Field)
		if err != nil {
			return "", err
		}
		if strings.ContainsAny(value, " \t\n'\"") {
			return "", fmt.Errorf("version variable %s: value %q has a space or quote", vv.Name, value)
		}
		flags = append(flags, fmt.Sprintf("-X %s/%s.%s=%s", module, v.Package, vv.Name, value))
	}
	return strings.Join(flags, " "), nil
}
