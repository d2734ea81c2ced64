package pins

import (
	"fmt"
	"strings"
)

// Format renders the pin as its pin-file line, without indentation.
func (p Pin) Format() string {
	s := fmt.Sprintf("pin %s %s series=%s revision=%d", p.Version, p.Sum, p.Series, p.Revision)
	if p.Tags != "" {
		s += " tags=" + p.Tags
	}
	if p.Default {
		s += " default"
	}
	return s
}

// SetPin returns the pin file content data with pin recorded for the named
// upstream, and the pin it replaced, if any.
//
// A pin of the same minor is replaced in place (it keeps its default mark,
// its indentation and its trailing comment); otherwise the pin is added after
// the upstream's last pin and is not the default: moving the default is a
// decision for a person, not a side effect of a rebase. Every other byte of
// data is kept, so the change reviews as a one-line diff. The result is
// parsed again before it is returned.
func SetPin(name string, data []byte, upstream string, pin Pin) ([]byte, *Pin, error) {
	f, err := Parse(name, data)
	if err != nil {
		return nil, nil, err
	}
	u, err := f.Upstream(upstream)
	if err != nil {
		return nil, nil, err
	}
	lines := strings.Split(string(data), "\n")
	var replaced *Pin
	for i := range u.Pins {
		if u.Pins[i].Minor() == pin.Minor() {
			old := u.Pins[i]
			replaced = &old
		}
	}
	if replaced != nil {
		pin.Default = replaced.Default
		if pin.Tags == "" {
			// A patch release of the same minor builds as the one it
			// replaces (upstream's hack/build.sh rarely changes in one).
			pin.Tags = replaced.Tags
		}
		orig := lines[replaced.Line-1]
		indent := orig[:len(orig)-len(strings.TrimLeft(orig, " \t"))]
		line := indent + pin.Format()
		if _, comment, ok := strings.Cut(orig, "#"); ok {
			line += " #" + comment
		}
		lines[replaced.Line-1] = line
	} else {
		pin.Default = false
		last := u.Pins[len(u.Pins)-1].Line
		orig := lines[last-1]
		indent := orig[:len(orig)-len(strings.TrimLeft(orig, " \t"))]
		lines = append(lines[:last], append([]string{indent + pin.Format()}, lines[last:]...)...)
	}
	out := []byte(strings.Join(lines, "\n"))
	if _, err := Parse(name, out); err != nil {
		return nil, nil, fmt.Errorf("the updated pin file would not parse: %w", err)
	}
	return out, replaced, nil
}
