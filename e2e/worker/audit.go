package worker

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// auditFlags turns audit logging on for a hub's kube-apiserver
// (controlplane.AuditFlags), the log in dir.
func auditFlags(dir string) (flags []string, logPath string, err error) {
	logPath = filepath.Join(dir, "audit.log")
	flags, err = controlplane.AuditFlags(dir, logPath)
	return flags, logPath, err
}

// auditEvent is an event of a hub's audit log.
type auditEvent = controlplane.AuditEvent

// requestKind names what a request did, independent of which object it
// named: verb and resource, with the subresource ("update clusters/status"),
// or verb and path for a request outside the resource API (discovery:
// "get /apis").
func requestKind(e auditEvent) string {
	if e.ObjectRef == nil || e.ObjectRef.Resource == "" {
		return e.Verb + " " + strings.SplitN(e.RequestURI, "?", 2)[0]
	}
	if e.ObjectRef.Subresource != "" {
		return e.Verb + " " + e.ObjectRef.Resource + "/" + e.ObjectRef.Subresource
	}
	return e.Verb + " " + e.ObjectRef.Resource
}

// requestMultiset counts each request once by kind. A request has one event
// per stage it reached (a watch: ResponseStarted, later ResponseComplete),
// all with its auditID, so requests are told apart by auditID; an event
// without one (a hand-written log) counts on its own.
func requestMultiset(events []auditEvent) map[string]int {
	seen := map[string]bool{}
	out := map[string]int{}
	for _, e := range events {
		if e.AuditID != "" {
			if seen[e.AuditID] {
				continue
			}
			seen[e.AuditID] = true
		}
		out[requestKind(e)]++
	}
	return out
}

// withoutConflicts drops the requests answered 409 Conflict and counts
// them. A controller's write that races its own cache is refused and
// retried; how often that happens depends on timing (the machine's load),
// not on the code that sent it.
func withoutConflicts(events []auditEvent) (kept []auditEvent, conflicts int) {
	for _, e := range events {
		if e.ResponseStatus.Code == 409 {
			conflicts++
			continue
		}
		kept = append(kept, e)
	}
	return kept, conflicts
}

// watchesOnce counts every watched resource once: a reflector re-opens its
// watch whenever the API server ends one (a timeout, a stream closed under
// load), so how many watches a run opened is timing, while which resources
// it watches is code.
func watchesOnce(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, n := range m {
		if strings.HasPrefix(k, "watch ") && n > 1 {
			n = 1
		}
		out[k] = n
	}
	return out
}

// multisetDiff lists, sorted, every kind whose count differs between got
// and want, as "kind: got N, want M"; empty when they are equal.
func multisetDiff(got, want map[string]int) []string {
	kinds := map[string]bool{}
	for k := range got {
		kinds[k] = true
	}
	for k := range want {
		kinds[k] = true
	}
	var out []string
	for k := range kinds {
		if got[k] != want[k] {
			out = append(out, fmt.Sprintf("%s: got %d, want %d", k, got[k], want[k]))
		}
	}
	sort.Strings(out)
	return out
}

// formatMultiset renders counts sorted by kind, for notes and failures.
func formatMultiset(m map[string]int) string {
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s x%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// readAuditLog reads a hub's audit log (controlplane.ReadAudit).
func readAuditLog(path string) ([]auditEvent, error) { return controlplane.ReadAudit(path) }

// sentBy returns the events whose user agent starts with agent. client-go's
// default user agent starts with the binary's name ("worker-operator/v0.0.0
// (linux/amd64) kubernetes/..."), and hubfollow's probe appends to that
// default, so every request of the worker process matches, authenticated or
// not (a request rejected at authentication has no user, but has its agent).
func sentBy(events []auditEvent, agent string) []auditEvent {
	var out []auditEvent
	for _, e := range events {
		if strings.HasPrefix(e.UserAgent, agent+"/") {
			out = append(out, e)
		}
	}
	return out
}
