package scale

import (
	"cmp"
	"slices"
	"time"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/pkg/membercred"
)

// The causes of a member list, as one API server's audit log shows them
// (classifyLists).
const (
	// CauseAfter401: a 401 that reached the caller (no replay followed
	// it) came before the list: from the same sender for the same
	// resource since its last healthy watch, or from the same sender (any
	// resource) in the lookback before it. The credential caused it.
	CauseAfter401 = "after 401"
	// CauseWatchCut: the sender's watch of the resource was cut (a watch
	// with ResponseStarted and no ResponseComplete: a SIGKILLed server
	// logs no completion) or refused with another error (403 while a
	// restarted server's RBAC cache fills, 410, 429, 5xx) since its last
	// healthy watch. The restart caused it.
	CauseWatchCut = "watch cut"
	// CauseNewInformer: no earlier request of the sender for the resource
	// in the whole log: an informer or process that just started.
	CauseNewInformer = "new informer"
	// CauseReplay: the patched transport's replay of a list answered 401
	// (the same user agent, verb and URI within replayWindow, now with a
	// user): the same relist sent again with the re-read token; the relist
	// is counted under its first attempt's cause.
	CauseReplay = "replay of a 401"
	// CauseOther: none of those; what is left is a list after a watch
	// that ran and ended with no error (it expired or its client closed
	// it), or after the sender's previous list with nothing between.
	CauseOther = "other"
)

// replayWindow is how soon a replay follows the 401 it replays: the
// patched transport waits at most membercred.MaxReadWait for the Secret's
// re-read and then sends the request again at once; the second is the
// round trips on a loaded machine.
const replayWindow = membercred.MaxReadWait + time.Second

// lookback401 is how long before a list a 401 of the same sender counts
// as its cause whatever the resource (client-go backs a failed reflector
// off 0.8 s at first).
const lookback401 = 5 * time.Second

// shortWatch is how long a watch must have run to count as a healthy one
// that ended on its own: one that ends sooner was refused in its stream
// (410 Gone is logged 200), and client-go treats a watch of less than a
// second with no events as an error too.
const shortWatch = time.Second

// request is one request of an audit log: its events merged by audit ID.
type request struct {
	controlplane.AuditEvent
	// complete: a ResponseComplete was logged; end is its stageTimestamp.
	complete bool
	end      time.Time
	// user is the sender: the authenticated user, or for a 401 the user
	// of the replay that followed it ("" if none did).
	user     string
	replayed bool // a 401 a replay followed: its caller never saw it
	replay   bool // the replay of a 401
}

// senderKey is who sent a request for what: one informer of one member
// client in one process, as the log can tell them apart.
type senderKey struct{ agent, user, resource, namespace string }

func resourceOf(e controlplane.AuditEvent) string {
	if e.ObjectRef == nil {
		return "(non-resource)"
	}
	if e.ObjectRef.Subresource != "" {
		return e.ObjectRef.Resource + "/" + e.ObjectRef.Subresource
	}
	return e.ObjectRef.Resource
}

func (q *request) key() senderKey {
	ns := ""
	if q.ObjectRef != nil {
		ns = q.ObjectRef.Namespace
	}
	return senderKey{Agent(q.UserAgent), q.user, resourceOf(q.AuditEvent), ns}
}

// requests merges one API server's events into requests (a watch logs
// ResponseStarted and ResponseComplete under one audit ID; an event
// without one stands alone), in the order they were received, and pairs
// each 401 (logged with no user) with the replay that followed it.
func requests(events []controlplane.AuditEvent) []*request {
	var out []*request
	byID := map[string]*request{}
	for _, e := range events {
		q := byID[e.AuditID]
		if q == nil || e.AuditID == "" {
			q = &request{AuditEvent: e, user: e.User.Username}
			out = append(out, q)
			if e.AuditID != "" {
				byID[e.AuditID] = q
			}
		}
		if e.Stage == "ResponseComplete" || e.Stage == "Panic" {
			q.complete, q.end = true, e.StageTimestamp
			// The completion's code is the answer a watch ended with.
			q.ResponseStatus = e.ResponseStatus
		}
	}
	slices.SortStableFunc(out, func(a, b *request) int { return a.RequestReceived.Compare(b.RequestReceived) })
	for i, q := range out {
		if q.ResponseStatus.Code != 401 || q.user != "" {
			continue
		}
		for _, r := range out[i+1:] {
			if r.RequestReceived.Sub(q.RequestReceived) > replayWindow {
				break
			}
			if !r.replay && r.user != "" && r.ResponseStatus.Code != 401 && r.UserAgent == q.UserAgent && r.Verb == q.Verb && r.RequestURI == q.RequestURI {
				q.user, q.replayed, r.replay = r.user, true, true
				break
			}
		}
	}
	return out
}

// classifyLists returns the cause of every list received in [from, to]
// whose sender (Agent) is not in exclude, by list: events is one API
// server's whole log (history before the window included).
func classifyLists(events []controlplane.AuditEvent, from, to time.Time, exclude ...string) map[*request]string {
	all := requests(events)
	history := map[senderKey][]int{}
	for i, q := range all {
		k := q.key()
		history[k] = append(history[k], i)
	}
	out := map[*request]string{}
	for i, q := range all {
		if q.Verb != "list" || q.RequestReceived.Before(from) || q.RequestReceived.After(to) || slices.Contains(exclude, Agent(q.UserAgent)) {
			continue
		}
		out[q] = cause(all, history[q.key()], i)
	}
	return out
}

// cause classifies the list all[i]; mine are the indexes of its sender's
// requests for the resource, in order.
func cause(all []*request, mine []int, i int) string {
	l := all[i]
	agent := Agent(l.UserAgent)
	// A 401 that reached its caller, from this sender or from one the log
	// cannot name (a 401 nobody replayed has no user): the credential.
	// Blaming an unnamed one errs against the patched build, never for it.
	for j := i - 1; j >= 0 && l.RequestReceived.Sub(all[j].RequestReceived) <= lookback401; j-- {
		q := all[j]
		if q.ResponseStatus.Code == 401 && !q.replayed && Agent(q.UserAgent) == agent && (q.user == "" || q.user == l.user) {
			return CauseAfter401
		}
	}
	// After that: a replay paired with the wrong 401 (same agent and URI,
	// another member's) must not hide a 401 its own sender saw.
	if l.replay {
		return CauseReplay
	}
	// Back from the list through the sender's requests for the resource,
	// to its previous list or a watch that ran and ended on its own: the
	// latest sign on the way is the cause.
	at, _ := slices.BinarySearchFunc(mine, i, cmp.Compare[int])
	if at == 0 {
		return CauseNewInformer
	}
	for _, j := range slices.Backward(mine[:at]) {
		q := all[j]
		switch code := q.ResponseStatus.Code; {
		case code == 401 && q.replayed:
			continue
		case code == 401:
			return CauseAfter401
		case q.Verb == "watch" && !q.complete:
			return CauseWatchCut
		case code >= 400:
			return CauseWatchCut
		case q.Verb == "list":
			return CauseOther
		case q.Verb == "watch" && q.end.Sub(q.RequestReceived) >= shortWatch:
			return CauseOther
		}
	}
	return CauseOther
}
