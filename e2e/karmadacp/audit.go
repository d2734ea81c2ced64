package karmadacp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// memberAuditPolicy records every request to a member at Metadata level:
// who sent it, what it did, and the response code; no bodies, so the log
// carries no object content (and no token: kube-apiserver never logs
// one). Every stage but RequestReceived, so a request is logged once it
// has an answer; an authentication failure is logged too (with no user),
// which is what makes a 401 visible on the member's side.
const memberAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// AuditFlags turns audit logging on for a member's kube-apiserver: the
// policy is written to dir, the log goes to logPath (JSON lines). The log
// backend's default mode is blocking, so an event is in the file before
// the response reaches the client.
func AuditFlags(dir, logPath string) ([]string, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(policy, []byte(memberAuditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("writing the audit policy: %w", err)
	}
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + logPath,
		"--audit-log-format=json",
	}, nil
}

// AuditEvent is the part of an audit.k8s.io/v1 Event the suite reads.
type AuditEvent struct {
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

// ReadAudit reads a JSON-lines audit log. A line that does not parse is an
// error naming the file and line: kube-apiserver writes whole lines, so a
// broken one means the wrong file.
func ReadAudit(path string) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("audit log %s, line %d: %w", path, n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit log %s: %w", path, err)
	}
	return out, nil
}

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

// String describes an audit event without anything secret (the log has no
// token): when, what, who, the answer.
func (e AuditEvent) String() string {
	user := e.User.Username
	if user == "" {
		user = "(unauthenticated)"
	}
	return fmt.Sprintf("%s %s %s by %s (%s): %d", e.RequestReceived.UTC().Format(time.RFC3339Nano), e.Verb, e.RequestURI, user, e.UserAgent, e.ResponseStatus.Code)
}
