package karmada

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

const sampleLog = `I1202 12:00:00.000000       1 controllermanager.go:100] "Starting"
E1202 12:00:05.000000       1 reflector.go:204] "Failed to watch" err="failed to list *v1.Node: Unauthorized" reflector="pkg/mod/k8s.io/client-go@v0.35.3/tools/cache/reflector.go:290" type="*v1.Node"
E1202 12:00:05.100000       1 reflector.go:204] "Failed to watch" err="failed to list *v1.Pod: Unauthorized" reflector="x" type="*v1.Pod"
I1202 12:00:06.000000       1 round_tripper.go:1] "Request" headers="Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJl"
E1202 12:00:09.000000       1 reflector.go:204] "Failed to watch" err="Unauthorized" reflector="x" type="*v1.Node"
`

func TestLines(t *testing.T) {
	second := strings.Index(sampleLog, "E1202 12:00:05.1")
	tests := []struct {
		name string
		from int
		want []string
	}{
		{name: "whole log", from: 0, want: []string{"12:00:05.000000", "12:00:09.000000"}},
		{name: "from a line start", from: second, want: []string{"12:00:09.000000"}},
		// A line begun before the offset was logged before the moment it marks.
		{name: "from inside a line", from: strings.Index(sampleLog, "err=\"failed to list *v1.Node"), want: []string{"12:00:09.000000"}},
		{name: "past the end", from: len(sampleLog) + 10, want: nil},
		{name: "negative offset reads nothing", from: -1, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Lines(sampleLog, tt.from, NodeInformerUnauthorized)
			if len(got) != len(tt.want) {
				t.Fatalf("Lines() = %q, want %d lines", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("line %d = %q, want the one at %s", i, got[i], w)
				}
			}
		})
	}
}

func TestEvidencePatterns(t *testing.T) {
	tests := []struct {
		name string
		re   *regexp.Regexp
		want []string
	}{
		{name: "node reflector 401s, list or watch", re: NodeInformerUnauthorized, want: []string{"12:00:05.000000", "12:00:09.000000"}},
		{name: "node LIST 401 only", re: NodeListUnauthorized, want: []string{"12:00:05.000000"}},
		{name: "any LIST 401", re: ListUnauthorized, want: []string{"12:00:05.000000", "12:00:05.100000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Lines(sampleLog, 0, tt.re)
			if len(got) != len(tt.want) {
				t.Fatalf("Lines() = %q, want %d lines", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("line %d = %q, want the one at %s", i, got[i], w)
				}
			}
		})
	}
}

func TestLinesRedactAndShorten(t *testing.T) {
	got := Lines(sampleLog, 0, Unauthorized)
	if len(got) != 3 {
		t.Fatalf("Lines(Unauthorized) = %q, want 3", got)
	}
	for _, l := range Lines(sampleLog, 0, regexp.MustCompile("Bearer")) {
		if strings.Contains(l, "eyJ") || !strings.Contains(l, "<redacted>") {
			t.Errorf("token not redacted: %q", l)
		}
	}
	long := "E " + strings.Repeat("x", 2*maxEvidenceLen) + " Unauthorized\n"
	if l := Lines(long, 0, Unauthorized); len(l) != 1 || len(l[0]) > maxEvidenceLen+3 {
		t.Errorf("long line not shortened: %d bytes", len(l[0]))
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln end", want: "token <redacted> end"},
		{in: "no token here: Unauthorized", want: "no token here: Unauthorized"},
		{in: "eyJ alone is not a token", want: "eyJ alone is not a token"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNodeReflectorBackoffWaits(t *testing.T) {
	log := `I1202 23:59:58.500000       1 reflector.go:991] "Watch close" reflector="x" type="*v1.Node" totalItems=0
I1202 23:59:59.500000       1 reflector.go:565] "Watch closed" reflector="x" type="*v1.Node" err="too old resource version: 202 (206)"
I1202 23:59:59.600000       1 reflector.go:565] "Watch closed" reflector="x" type="*v1.Pod" err="too old resource version: 202 (206)"
I1203 00:00:00.400000       1 reflector.go:411] "Listing and watching" type="*v1.Node" reflector="x"
I1203 00:00:01.000000       1 reflector.go:556] "Watch failed - backing off" reflector="x" type="*v1.Node" err="dial tcp 127.0.0.1:1: connect: connection refused"
I1203 00:00:02.600000       1 reflector.go:725] "watch-list failed - backing off" reflector="x" type="*v1.Node" err="connection refused"
I1203 00:00:03.000000       1 reflector.go:582] "Warning: watch ended with error" reflector="x" type="*v1.Node" err="very short watch"
`
	steps := Lines(log, 0, NodeReflectorStep)
	if len(steps) != 5 {
		t.Fatalf("NodeReflectorStep matched %d lines, want the 5 step lines of *v1.Node: %q", len(steps), steps)
	}
	got := BackoffWaits(append(steps, "not a klog line"))
	// The relist starts no wait; the last failure has no next line.
	want := []time.Duration{900 * time.Millisecond, 1600 * time.Millisecond, 400 * time.Millisecond}
	if len(got) != len(want) {
		t.Fatalf("BackoffWaits = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("wait %d = %v, want %v (across midnight counted forward)", i, got[i], want[i])
		}
	}
	if _, err := LineTime("no header"); err == nil {
		t.Error("LineTime(no header) succeeded")
	}
}
