package karmadacp

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// AuditEvent is an event of a member's audit log
// (controlplane.AuditFlags, controlplane.ReadAudit).
type AuditEvent = controlplane.AuditEvent

// AuditWindow is what a member's audit log shows between two moments.
type AuditWindow struct {
	// ByUser counts the requests user sent (one per auditID).
	ByUser int
	// ByUserWrites counts those that wrote (create, update, patch).
	ByUserWrites int
	// Unauthorized are the requests answered 401, whoever sent them: the
	// member fails authentication before it knows a user.
	Unauthorized []AuditEvent
}

// Window summarises events received in [from, to] for user.
func Window(events []AuditEvent, user string, from, to time.Time) AuditWindow {
	var w AuditWindow
	for _, e := range controlplane.ReceivedIn(events, from, to) {
		if e.ResponseStatus.Code == 401 {
			w.Unauthorized = append(w.Unauthorized, e)
		}
		if e.User.Username != user {
			continue
		}
		w.ByUser++
		switch e.Verb {
		case "create", "update", "patch":
			w.ByUserWrites++
		}
	}
	return w
}

// Reads are what one component's requests of one resource amount to in a
// window of a member's audit log.
type Reads struct {
	// Lists are the requests that send the whole collection again: a LIST,
	// or a WATCH with sendInitialEvents=true (client-go's WatchListClient
	// lists that way), which is what an informer that relists costs.
	Lists int
	// Watches are the watches sent with a resourceVersion. One the watch
	// cache finds too old is among them: it is answered 200 and closed
	// with a 410 event in the stream, which the audit log does not show.
	Watches int
}

// ComponentReads counts, by resource ("pods", "apps/deployments"), the
// lists and resumed watches the component (the user agent's program name)
// sent in [from, to], one per auditID, whatever the answer: a LIST refused
// with 410 and retried is two LISTs.
func ComponentReads(events []AuditEvent, component string, from, to time.Time) map[string]Reads {
	out := map[string]Reads{}
	for _, e := range controlplane.ReceivedIn(events, from, to) {
		if e.ObjectRef == nil || e.ObjectRef.Subresource != "" {
			continue
		}
		if program, _, _ := strings.Cut(e.UserAgent, "/"); program != component {
			continue
		}
		resource := e.ObjectRef.Resource
		if e.ObjectRef.APIGroup != "" {
			resource = e.ObjectRef.APIGroup + "/" + resource
		}
		r := out[resource]
		switch {
		case e.Verb == "list", e.Verb == "watch" && strings.Contains(e.RequestURI, "sendInitialEvents=true"):
			r.Lists++
		case e.Verb == "watch":
			r.Watches++
		default:
			continue
		}
		out[resource] = r
	}
	return out
}

// Lists sums the lists of reads.
func Lists(reads map[string]Reads) int {
	n := 0
	for _, r := range reads {
		n += r.Lists
	}
	return n
}

// FormatReads lists reads by resource, sorted: "nodes 1 LIST 1 WATCH; ...".
func FormatReads(reads map[string]Reads) string {
	if len(reads) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(reads))
	for _, k := range slices.Sorted(maps.Keys(reads)) {
		parts = append(parts, fmt.Sprintf("%s %d LIST %d WATCH", k, reads[k].Lists, reads[k].Watches))
	}
	return strings.Join(parts, "; ")
}

// RelistedBeyond names the resources got lists more often than control
// does ("nodes 1 > 0"), sorted.
func RelistedBeyond(got, control map[string]Reads) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if got[k].Lists > control[k].Lists {
			out = append(out, fmt.Sprintf("%s %d > %d", k, got[k].Lists, control[k].Lists))
		}
	}
	return out
}
