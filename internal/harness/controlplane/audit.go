package controlplane

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// AuditPolicy records every request at Metadata level: who sent it, with
// which user agent, to which URI, and the response code. No bodies, so the
// log stays small and carries no object content (and no token:
// kube-apiserver never logs one); every stage but RequestReceived, so a
// request appears once it has an answer. A request refused at
// authentication is logged too, with no user, which is what makes a 401
// visible on the server's side.
const AuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// AuditPolicyFile is the policy's name in the folder AuditFlags writes it to.
const AuditPolicyFile = "audit-policy.yaml"

// AuditFlags are the kube-apiserver flags (Options.ExtraAPIServerFlags)
// that write every request to logPath as JSON lines, with the policy
// written into dir. The log backend's default mode is blocking, so an
// event is in the file before the response reaches the client: a test that
// reads the file after a client acted sees what it did.
func AuditFlags(dir, logPath string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	policy := filepath.Join(dir, AuditPolicyFile)
	if err := os.WriteFile(policy, []byte(AuditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("writing the audit policy: %w", err)
	}
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + logPath,
		"--audit-log-format=json",
	}, nil
}

// AuditEvent is the part of an audit.k8s.io/v1 Event the suites read.
type AuditEvent struct {
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
	// StageTimestamp is when the stage was reached: for a watch's
	// ResponseComplete, when its stream ended.
	StageTimestamp time.Time `json:"stageTimestamp"`
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

// ReadAudit reads a JSON-lines audit log: the rotated files kube-apiserver
// left beside it first, oldest first, then the file itself. The log
// backend (lumberjack) appends to the file when kube-apiserver starts
// again with the same path, so a restarted server's events follow the
// killed one's in the same file; past --audit-log-maxsize (100 MB when
// unset, as AuditFlags leaves it) it renames the file to
// <name>-<UTC time><ext> and starts a new one, and a reader of the file
// alone would lose the older requests. A missing file is an empty log
// (the API server creates it with its first event), and a last line with
// no newline yet is being written and is left for the next read; any
// other line that does not parse is an error naming the file and line,
// since kube-apiserver writes whole lines and a broken one means the
// wrong file.
func ReadAudit(path string) ([]AuditEvent, error) {
	ext := filepath.Ext(path)
	rotated, err := filepath.Glob(strings.TrimSuffix(path, ext) + "-*" + ext)
	if err != nil {
		return nil, fmt.Errorf("audit log %s: %w", path, err)
	}
	// The rotated names carry a sortable timestamp.
	slices.Sort(rotated)
	var out []AuditEvent
	for _, p := range append(rotated, path) {
		events, err := readAuditFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, events...)
	}
	return out, nil
}

func readAuditFile(path string) ([]AuditEvent, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading audit log %s: %w", path, err)
	}
	lines := bytes.Split(data, []byte("\n"))
	lines = lines[:len(lines)-1] // after the last newline: empty, or torn
	var out []AuditEvent
	for i, line := range lines {
		if len(line) == 0 {
			continue
		}
		var e AuditEvent
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("audit log %s, line %d: %w", path, i+1, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// ReceivedIn returns the requests received in [from, to], one event each. A
// request has an event per stage it reached (a watch: ResponseStarted, later
// ResponseComplete), all with its auditID, and every stage carries the same
// request fields; an event without an auditID (a hand-written log) stands on
// its own.
func ReceivedIn(events []AuditEvent, from, to time.Time) []AuditEvent {
	var out []AuditEvent
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
		out = append(out, e)
	}
	return out
}
