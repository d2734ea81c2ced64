package scale

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
)

// Requests counts what an API server's audit log shows in a window.
type Requests struct {
	// Total is every request counted (one per audit ID: a watch logs
	// ResponseStarted and ResponseComplete).
	Total int `json:"total"`
	// ByVerb counts them by the audit verb (get, list, watch, create,
	// update, patch, delete...).
	ByVerb map[string]int `json:"byVerb"`
	// Lists are the list calls: relists, each a full read of a resource
	// (a watch's initial list included).
	Lists int `json:"lists"`
	// Unauthorized are the requests answered 401.
	Unauthorized int `json:"unauthorized"`
	// ByAgent counts them by the first word of the user agent, the
	// component that sent them.
	ByAgent map[string]int `json:"byAgent"`
	// ByCall counts them by "<agent> <verb> <resource>", for reading
	// where a difference comes from.
	ByCall map[string]int `json:"byCall"`
	// ListsByCause counts the lists by what caused each (classifyLists:
	// CauseAfter401, CauseWatchCut, ...), and ListCauses by cause and
	// "<agent> <resource>". nil when the lists were not classified (a
	// report from before the classification): then nothing is known of
	// their causes, where an empty map is a log with no list.
	ListsByCause map[string]int            `json:"listsByCause"`
	ListCauses   map[string]map[string]int `json:"listCauses"`
}

// discoveryFanOut is the ByCall key of karmada-metrics-adapter's
// discovery of the members: for every custom-metrics discovery request it
// answers (ListAllMetrics), upstream's adapter asks every member for its
// API groups (GET /api and /apis), whatever the credentials. Its only
// non-resource requests to a member are those. It is steady traffic, the
// same with nothing rotated (the control storm), at a rate set by who asks
// karmada-apiserver for discovery and how long the adapter takes to answer
// at that load, and it stops while the adapter is restarted: counted
// apart, it is not what a recovery costs.
const discoveryFanOut = "karmada-metrics-adapter get (non-resource)"

// DiscoveryFanOut is how many of r are karmada-metrics-adapter's
// discovery of the members (discoveryFanOut).
func (r Requests) DiscoveryFanOut() int { return r.ByCall[discoveryFanOut] }

// Recovery is r less the discovery fan-out: what a storm's recovery sends.
func (r Requests) Recovery() int { return r.Total - r.DiscoveryFanOut() }

// Agent is the component a user agent names: client-go's default agent
// is "<binary>/<version> (<os>/<arch>) kubernetes/<commit>", and a
// component that sets its own starts with its name as well.
func Agent(userAgent string) string {
	a, _, _ := strings.Cut(userAgent, " ")
	a, _, _ = strings.Cut(a, "/")
	if a == "" {
		return "(none)"
	}
	return a
}

// CountRequests counts events received in [from, to] whose sender
// (Agent) is not in exclude: the harness's own requests and the API
// server's loopback client are not what the fleet costs. events is one
// API server's whole log: a list's cause is read from what its sender
// sent before, in the window or not.
func CountRequests(events []controlplane.AuditEvent, from, to time.Time, exclude ...string) Requests {
	r := Requests{ByVerb: map[string]int{}, ByAgent: map[string]int{}, ByCall: map[string]int{},
		ListsByCause: map[string]int{}, ListCauses: map[string]map[string]int{}}
	for q, c := range classifyLists(events, from, to, exclude...) {
		r.ListsByCause[c]++
		if r.ListCauses[c] == nil {
			r.ListCauses[c] = map[string]int{}
		}
		r.ListCauses[c][Agent(q.UserAgent)+" "+resourceOf(q.AuditEvent)]++
	}
	for _, e := range controlplane.ReceivedIn(events, from, to) {
		agent := Agent(e.UserAgent)
		if slices.Contains(exclude, agent) {
			continue
		}
		r.Total++
		r.ByVerb[e.Verb]++
		r.ByAgent[agent]++
		r.ByCall[agent+" "+e.Verb+" "+resourceOf(e)]++
		if e.Verb == "list" {
			r.Lists++
		}
		if e.ResponseStatus.Code == 401 {
			r.Unauthorized++
		}
	}
	return r
}

// Add sums two counts (the members' audit logs into one).
func (r Requests) Add(o Requests) Requests {
	sum := Requests{
		Total: r.Total + o.Total, Lists: r.Lists + o.Lists, Unauthorized: r.Unauthorized + o.Unauthorized,
		ByVerb: maps.Clone(r.ByVerb), ByAgent: maps.Clone(r.ByAgent), ByCall: maps.Clone(r.ByCall),
	}
	if sum.ByVerb == nil {
		sum.ByVerb = map[string]int{}
	}
	if sum.ByAgent == nil {
		sum.ByAgent = map[string]int{}
	}
	if sum.ByCall == nil {
		sum.ByCall = map[string]int{}
	}
	for k, v := range o.ByCall {
		sum.ByCall[k] += v
	}
	for k, v := range o.ByVerb {
		sum.ByVerb[k] += v
	}
	for k, v := range o.ByAgent {
		sum.ByAgent[k] += v
	}
	if r.ListsByCause != nil || o.ListsByCause != nil {
		sum.ListsByCause = maps.Clone(r.ListsByCause)
		if sum.ListsByCause == nil {
			sum.ListsByCause = map[string]int{}
		}
		for k, v := range o.ListsByCause {
			sum.ListsByCause[k] += v
		}
		sum.ListCauses = map[string]map[string]int{}
		for _, m := range []map[string]map[string]int{r.ListCauses, o.ListCauses} {
			for c, calls := range m {
				if sum.ListCauses[c] == nil {
					sum.ListCauses[c] = map[string]int{}
				}
				for k, v := range calls {
					sum.ListCauses[c][k] += v
				}
			}
		}
	}
	return sum
}

// SecretReads counts, per Secret name, the get, list and watch requests
// user sent for Secrets in namespace during [from, to]: the member
// credential reads as karmada-apiserver saw them.
func SecretReads(events []controlplane.AuditEvent, user, namespace string, from, to time.Time) map[string]int {
	out := map[string]int{}
	for _, e := range controlplane.ReceivedIn(events, from, to) {
		if e.User.Username != user || e.ObjectRef == nil || e.ObjectRef.Resource != "secrets" || e.ObjectRef.Namespace != namespace {
			continue
		}
		switch e.Verb {
		case "get", "list", "watch":
			out[e.ObjectRef.Name]++
		}
	}
	return out
}
