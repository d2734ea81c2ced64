package build

import "testing"

// A two-part go line names the line's first release, as the go command
// reads it; the side-by-side note must not print "go1.24".
func TestImpliedGo(t *testing.T) {
	for line, want := range map[string]string{"1.25.10": "go1.25.10", "1.24": "go1.24.0", "1.24.0": "go1.24.0"} {
		if got := ImpliedGo(line); got != want {
			t.Errorf("ImpliedGo(%q) = %q, want %q", line, got, want)
		}
	}
}
