package karmada

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Log patterns the report quotes as evidence.
var (
	// NodeInformerUnauthorized is the member node reflector failing to
	// authenticate: client-go's "Failed to watch" for *v1.Node with a 401.
	NodeInformerUnauthorized = regexp.MustCompile(`Unauthorized.*\*v1\.Node|\*v1\.Node.*Unauthorized`)
	// ListUnauthorized is any reflector's LIST refused with 401, and
	// NodeListUnauthorized the node reflector's: the plainest evidence
	// lines (a failed watch's error may carry the restart's connection
	// reset in the same line).
	ListUnauthorized     = regexp.MustCompile(`failed to list [^"]*: Unauthorized`)
	NodeListUnauthorized = regexp.MustCompile(`failed to list \*v1\.Node: Unauthorized`)
	// MemberTokenRejected is the patched binary saying the Secret's token is
	// rejected by the member even after re-reading it (pkg/membercred).
	MemberTokenRejected = regexp.MustCompile(`Member cluster rejects its credential`)
	// OwnCredentialExit is the own-credential guard's exit line.
	OwnCredentialExit = regexp.MustCompile(`Own API server credential is permanently rejected, exiting`)
	// NodeReflectorStep is a line of the member node reflector (client-go's
	// reflector; -v=3 and -v=4 lines, see e2e/karmadacp's
	// reflectorVerbosity) that either ends an attempt, after which it waits
	// one step of its exponential backoff (800ms doubling to 30s, each plus up to 100% jitter, reset
	// only after 2 minutes without a step), or starts a new list and
	// watch. "Watch closed" is a watch the server ended with 410 Gone
	// (what a restarted kube-apiserver answers an old resource version);
	// "Warning: watch ended with error" any other error event.
	NodeReflectorStep = regexp.MustCompile(`"(Watch closed|Failed to watch|Warning: watch ended with error|Watch failed - backing off|watch-list failed - backing off|Listing and watching)".*type="\*v1\.Node"`)
	// ReflectorRelist is the line that starts a new list and watch.
	ReflectorRelist = regexp.MustCompile(`"Listing and watching"`)
	// ClusterClientFailed is the cluster-status controller failing to build
	// a member client, as it does every status period while the Secret is
	// missing (Karmada's BuildClusterConfig reads the Secret first).
	ClusterClientFailed = regexp.MustCompile(`Failed to create a ClusterClient for the given member cluster`)
	// Unauthorized is any 401 a client-go component logs.
	Unauthorized = regexp.MustCompile(`Unauthorized`)
)

// jwtLike matches what a ServiceAccount token looks like (three base64url
// segments, the first starting with the encoding of `{"`), so that no log
// line quoted into a report can carry one.
var jwtLike = regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)

// Redact replaces anything token-shaped in s.
func Redact(s string) string {
	return jwtLike.ReplaceAllString(s, "<redacted>")
}

// maxEvidenceLen bounds a quoted line: klog lines with a full error chain
// can be kilobytes, and a report line is for reading.
const maxEvidenceLen = 400

// Lines returns the lines of log from byte offset from on that match re,
// redacted and shortened for a report. An offset lets a scenario look only
// at what a process logged after a given moment (Process.Log's length then).
func Lines(log string, from int, re *regexp.Regexp) []string {
	if from < 0 || from > len(log) {
		from = len(log)
	}
	// A line already begun at the offset was logged before the moment the
	// offset marks: skip it.
	if from > 0 && log[from-1] != '\n' {
		if i := strings.IndexByte(log[from:], '\n'); i >= 0 {
			from += i + 1
		} else {
			from = len(log)
		}
	}
	var out []string
	for _, line := range strings.Split(log[from:], "\n") {
		if line == "" || !re.MatchString(line) {
			continue
		}
		line = Redact(line)
		if len(line) > maxEvidenceLen {
			line = line[:maxEvidenceLen] + "..."
		}
		out = append(out, line)
	}
	return out
}

// klogTime is the time of day in a klog header: "I1202 12:00:05.000000".
var klogTime = regexp.MustCompile(`^[IWEF]\d{4} (\d{2}:\d{2}:\d{2}\.\d{6})`)

// LineTime returns the time of day a klog line was logged, as an offset
// from midnight.
func LineTime(line string) (time.Duration, error) {
	m := klogTime.FindStringSubmatch(line)
	if m == nil {
		return 0, fmt.Errorf("no klog header in %q", Redact(line))
	}
	t, err := time.Parse("15:04:05.000000", m[1])
	if err != nil {
		return 0, err
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute +
		time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond()), nil
}

// BackoffWaits returns, for each line of steps (NodeReflectorStep lines in
// order) that ends an attempt, the time until the next line: the backoff
// step the reflector waited before its next attempt. The last line has no
// next one; lines without a klog header are skipped; a wait across
// midnight is counted forward.
func BackoffWaits(steps []string) []time.Duration {
	var out []time.Duration
	for i := 0; i+1 < len(steps); i++ {
		if ReflectorRelist.MatchString(steps[i]) {
			continue
		}
		from, err1 := LineTime(steps[i])
		to, err2 := LineTime(steps[i+1])
		if err1 != nil || err2 != nil {
			continue
		}
		d := to - from
		if d < 0 {
			d += 24 * time.Hour
		}
		out = append(out, d)
	}
	return out
}
