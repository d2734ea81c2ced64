package worker

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// auditPolicy records every request at Metadata level: who sent it, with
// which user agent, to which URI, and the response code. No bodies, so the
// log stays small and carries no object content; every stage but
// RequestReceived, so a request appears once it has an answer.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// auditFlags turns audit logging on for a hub's kube-apiserver, writing the
// policy into dir. The log backend's default mode is blocking, so an event
// is in the file before the response reaches the client: a test that
// reads the file after the worker acted sees what it did.
func auditFlags(dir string) (flags []string, logPath string, err error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, "", fmt.Errorf("writing the audit policy: %w", err)
	}
	logPath = filepath.Join(dir, "audit.log")
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + logPath,
		"--audit-log-format=json",
	}, logPath, nil
}

// auditEvent is the part of an audit.k8s.io/v1 Event the suite reads.
type auditEvent struct {
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
}

// readAuditLog reads a JSON-lines audit log. A missing file is an empty log
// (the API server creates it with its first event). A torn last line, being
// written while we read, is skipped.
func readAuditLog(path string) ([]auditEvent, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading audit log %s: %w", path, err)
	}
	defer f.Close()
	var events []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024) // Metadata events are small; 4 MiB bounds a runaway line
	for sc.Scan() {
		var e auditEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading audit log %s: %w", path, err)
	}
	return events, nil
}

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
