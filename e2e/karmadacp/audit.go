package karmadacp

import (
	"time"

	"github.com/holdfast-dist/holdfast/internal/controlplane"
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
	seen := map[string]bool{}
	for _, e := range events {
		if e.RequestReceived.Before(from) || e.RequestReceived.After(to) {
			continue
		}
		if e.AuditID != "" {
			if seen[e.AuditID] {
				continue
			}
			seen[e.AuditID] = true
		}
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
