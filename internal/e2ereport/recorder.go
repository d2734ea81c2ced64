package e2ereport

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Dir is where suites write their reports, relative to the repository root.
const Dir = "_output/reports/e2e"

// Versions maps a component ("kube-apiserver", "karmada-controller-manager
// (patched)") to its version.
type Versions map[string]string

// Suite is one suite's report file.
type Suite struct {
	Suite     string     `json:"suite"`
	Finished  time.Time  `json:"finished"`
	Versions  Versions   `json:"versions,omitempty"`
	Scenarios []Scenario `json:"scenarios"`
}

// Recorder collects the scenarios of one suite. It is safe for concurrent
// use (scenarios may run as parallel subtests).
type Recorder struct {
	root, suite string

	mu        sync.Mutex
	scenarios []Scenario
	versions  Versions
}

// NewRecorder returns a Recorder that Flush writes to
// <root>/_output/reports/e2e/<suite>.json.
func NewRecorder(root, suite string) *Recorder {
	return &Recorder{root: root, suite: suite, versions: Versions{}}
}

// Add records s. An empty Suite is set to the recorder's; Name and Notes are
// redacted.
func (r *Recorder) Add(s Scenario) {
	if s.Suite == "" {
		s.Suite = r.suite
	}
	s.Name = Redact(s.Name)
	notes := make([]string, len(s.Notes))
	for i, n := range s.Notes {
		notes[i] = Redact(n)
	}
	s.Notes = notes
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scenarios = append(r.scenarios, s)
}

// SetVersion records the version of a component; a later call replaces it.
func (r *Recorder) SetVersion(component, version string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.versions[component] = Redact(version)
}

// Len is the number of scenarios recorded so far; a TestMain can skip
// Flush when -run selected none of the suite's scenarios, keeping the last
// full report.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.scenarios)
}

// Path is the file Flush writes.
func (r *Recorder) Path() string {
	return filepath.Join(r.root, Dir, r.suite+".json")
}

// Flush writes everything recorded so far, replacing the suite's previous
// report. It writes a temporary file and renames it, so e2e-report never
// reads half a report.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	s := Suite{Suite: r.suite, Finished: time.Now().UTC().Truncate(time.Second), Versions: r.versions, Scenarios: r.scenarios}
	data, err := json.MarshalIndent(s, "", "  ")
	r.mu.Unlock()
	if err != nil {
		return fmt.Errorf("report %s: %w", r.suite, err)
	}
	path := r.Path()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("report %s: %w", r.suite, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), r.suite+".json.tmp-")
	if err != nil {
		return fmt.Errorf("report %s: %w", r.suite, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("report %s: writing %s: %w", r.suite, tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("report %s: writing %s: %w", r.suite, tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("report %s: %w", r.suite, err)
	}
	return nil
}
