//go:build e2e

package karmadacp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
	"github.com/holdfast-dist/holdfast/internal/harness/membercredmetrics"
)

const (
	// registryName is the scenario's ResourceRegistry.
	registryName = "member1-deployments"
	// searchTimeout bounds an object created on the member showing on a
	// search path: a member informer event and a cache write, well under
	// a second when it works (measured: see docs/e2e.md); the rest is
	// margin for a busy runner and for the first informer's initial list.
	searchTimeout = 2 * time.Minute
)

// searchStandIns are stated in the search scenario's notes, beside
// standIns.
var searchStandIns = []string{
	"stand-in: karmada-search runs as one process (upstream: two replicas) authenticating as karmada-apiserver's admin, a static token in system:masters (upstream: a client certificate in system:masters); no audit log, klog text format (upstream: json)",
	"stand-in: the scenario's Deployments are created directly on member1 (as a member's own user would); no propagation is involved",
}

// searchPath is one of the two ways karmada-search serves a cached member
// object.
type searchPath struct {
	name, prefix string
}

var (
	cachePath = searchPath{"cache", searchCachePrefix}
	proxyPath = searchPath{"proxy", searchProxyPrefix}
)

// testSearch is issue 14's scenario 2, karmada-search through rotation.
func testSearch(t *testing.T, b karmadacp.Build) {
	e := newEnv(t, b, withSearch())
	s := begin(t, "search", string(b), append(slices.Clone(standIns), searchStandIns...)...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)
	s.Timing("karmada-search-start", e.cp.StartTimes()[karmadacp.Search])

	m := e.joinMember1(ctx, s)

	if _, err := e.cp.API.Dynamic().Resource(karmadacp.ResourceRegistryGVR).Create(ctx, ResourceRegistry(registryName, memberName), metav1.CreateOptions{}); err != nil {
		s.Fatalf("creating ResourceRegistry %s: %v", registryName, err)
	}
	memberDeployments := e.member.Kubernetes().AppsV1().Deployments(workloadNamespace)
	registered := time.Now()
	if _, err := memberDeployments.Create(ctx, Deployment(workloadNamespace, "before", "search", 1), metav1.CreateOptions{}); err != nil {
		s.Fatalf("creating Deployment %s/before on %s: %v", workloadNamespace, memberName, err)
	}
	for _, p := range []searchPath{cachePath, proxyPath} {
		if err := e.waitSearch(ctx, p, "before", searchTimeout, nil); err != nil {
			s.Fatalf("before any rotation: %v", err)
		}
		s.Timing("registry-to-"+p.name+"-hit", time.Since(registered))
	}
	s.Notef("before the rotation: Deployment %s/before on %s is served by the cache path (%s) and the proxy path (%s)", workloadNamespace, memberName, DeploymentPath(searchCachePrefix, workloadNamespace, "before"), DeploymentPath(searchProxyPrefix, workloadNamespace, "before"))

	search := e.cp.Process(karmadacp.Search)
	metricsURL := e.cp.MetricsURL(karmadacp.Search)
	var before karmada.MemberCredential
	if b == karmadacp.Patched {
		mt, err := e.scrapeSearch(ctx, metricsURL)
		if err != nil {
			s.Errorf("karmada-search metrics: %v", err)
		}
		before = mt.MemberCredential(memberName)
	}
	rotateMark := len(search.Log())
	defer countCredentials(s, e.cp, memberName).note()
	var killMark int
	_, restarted := rotateAndRestart(ctx, s, m, func() { killMark = len(search.Log()) })
	// From the creation on: a member informer refused after this was
	// refused the object (blindWindow).
	createdMark := len(search.Log())
	if _, err := memberDeployments.Create(ctx, Deployment(workloadNamespace, "after", "search", 1), metav1.CreateOptions{}); err != nil {
		s.Fatalf("creating Deployment %s/after on %s: %v", workloadNamespace, memberName, err)
	}

	// Both paths are watched at once, so that neither's timing includes
	// the other's wait.
	type result struct {
		path searchPath
		took time.Duration
		err  error
	}
	results := make([]result, 2)
	var wg sync.WaitGroup
	for i, p := range []searchPath{cachePath, proxyPath} {
		timeout := searchTimeout
		var window func() string
		if b == karmadacp.Pristine && p == cachePath {
			// The pristine window of the cache path (see docs/e2e.md):
			// the ResourceRegistry controller built member1's informer
			// once, with the token of the time copied into the client
			// (BuildClusterConfig's BearerToken), and rebuilds it only
			// when the Cluster's spec, labels or API enablements or the
			// registries change. After the kill its reflector relists
			// with the revoked token and is refused, retrying at most
			// [30s, 60s) apart: a 401 logged after the object was created
			// shows the informer tried and was refused it; blindSettle
			// more shows nothing else brought it. No 401 within
			// reflectorRetryBound is inconclusive.
			timeout, window = reflectorRetryBound+blindSettle, blindWindow(search.Log, createdMark)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := e.waitSearch(ctx, p, "after", timeout, window)
			results[i] = result{path: p, took: time.Since(restarted), err: err}
		}()
	}
	wg.Wait()

	var broke []string
	for _, r := range results {
		step := fmt.Sprintf("%s path serves Deployment %s/after", r.path.name, workloadNamespace)
		// The cache path's window carries its refusal (errBlindWindow);
		// the proxy path has none, so a refusal logged since the object
		// was created is its evidence.
		refusal := ""
		if r.path == proxyPath {
			refusal = firstMatch(search.Log(), createdMark, MemberWatchUnauthorized, ProxyCacherRotatedIdentity, Unauthorized)
		}
		switch judgeStep(b == karmadacp.Pristine, r.err, refusal) {
		case stepPassed:
			s.Timing("restart-to-"+r.path.name+"-hit", r.took)
			if b == karmadacp.Pristine && r.path == proxyPath {
				s.Notef("note: on the pristine build the proxy path served the object created after the rotation: %s", pristineProxyMechanism)
				s.Notef("evidence (proxy path): %s", firstLine(search.Log(), killMark, ProxyCacherRotatedIdentity, ProxyCacherInitialized))
			}
		case stepBroke:
			broke = append(broke, r.path.name+" path")
			s.Notef("%s: %v", step, r.err)
			s.Notef("evidence (%s path): %s", r.path.name, firstLine(search.Log(), createdMark, MemberWatchUnauthorized, SearchCacheMiss, Unauthorized))
		default:
			// An inconclusive window: fail rather than report RED.
			s.Errorf("%s: inconclusive: %v", step, r.err)
		}
	}
	if search.Exited() {
		s.Errorf("%s exited (code %d); a member credential must never stop it", search.Name(), search.ExitCode())
	}
	s.Notef("karmada-search member Deployment informer 401s logged since the restart: %d", len(karmada.Lines(search.Log(), createdMark, MemberWatchUnauthorized)))
	if b == karmadacp.Patched {
		if lines := karmada.Lines(search.Log(), rotateMark, MemberTokenPickedUp); len(lines) > 0 {
			s.Notef("evidence: %s", lines[0])
		}
		if mt, err := e.scrapeSearch(ctx, metricsURL); err != nil {
			s.Errorf("karmada-search metrics: %v", err)
		} else {
			c := mt.MemberCredential(memberName)
			d := c.Sub(before)
			s.Notef("karmada-search membercred counters for %s: before the rotation %s; after %s; difference %s", memberName, before, c, d)
			// Which of membercred's two paths carried the rotation (see
			// docs/e2e.md, issue 16).
			if d.Unauthorized == 0 && d.Refreshes > 0 {
				s.Notef("path: the shared token source re-read the Secret when a client build (the proxy builds one for each List and Watch, and rebuilt them while member1 restarted) brought the new token; the ResourceRegistry controller's informer, sharing that source, relisted with it after the restart: no 401 to replay")
			} else if d.Recovered > 0 {
				s.Notef("path: member 401s replayed with the token re-read from the Secret (%v recovered)", d.Recovered)
			}
		}
		s.Notef("karmada-search metrics: %s", e.searchMetricsAuth(ctx, metricsURL))
	}

	switch {
	case len(broke) == 0 && b == karmadacp.Pristine:
		s.Outcome(e2ereport.Pass, "the pristine build served the object created after the rotation on both paths: the scenario no longer reproduces the bug")
	case len(broke) == 0:
		s.Outcome(e2ereport.Pass, "GREEN: after rotation, revocation and restart, Deployment %s/after created on %s is served by the cache and the proxy path", workloadNamespace, memberName)
	case b == karmadacp.Pristine:
		s.Outcome(e2ereport.RedAsExpected, "RED at %s", strings.Join(broke, "; "))
	default:
		s.Outcome(e2ereport.Fail, "broke at %s", strings.Join(broke, "; "))
	}
}

// pristineProxyMechanism says why the proxy path is expected to serve on
// the pristine build too.
const pristineProxyMechanism = "the proxy's cache (pkg/search/proxy/store) builds a new member client with BuildClusterConfig, reading the Secret as it is then, for every List and Watch its cacher's reflector makes, so the relist after the restart already carries the rotated token; the frozen token is the ResourceRegistry controller's informer's, which the cache path reads"

// waitSearch waits until karmada-search serves Deployment name from
// member1 on path p through karmada-apiserver. With window (pristine), it
// also ends, returning an errBlindWindow, once window returns the refusal
// that closes it.
func (e *env) waitSearch(ctx context.Context, p searchPath, name string, timeout time.Duration, window func() string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := DeploymentPath(p.prefix, workloadNamespace, name)
	var last string
	for {
		body, err := e.cp.API.Kubernetes().CoreV1().RESTClient().Get().AbsPath(url).DoRaw(ctx)
		if err == nil {
			cluster, found, perr := CachedFrom(body, name)
			switch {
			case perr != nil:
				last = perr.Error()
			case found && cluster == memberName:
				return nil
			case found:
				last = fmt.Sprintf("served from cluster %q, not %s", cluster, memberName)
			default:
				last = "not in the answer"
			}
		} else {
			last = err.Error()
		}
		if window != nil {
			if refusal := window(); refusal != "" {
				return errBlindWindow{fmt.Sprintf("GET %s: not served %s after member1's informer was refused with the object in place (%s); last: %s", url, blindSettle, refusal, last)}
			}
		}
		select {
		case <-ctx.Done():
			if window != nil {
				return fmt.Errorf("inconclusive: GET %s: no member informer 401 within %s after the object was created, and no hit either (last: %s)", url, reflectorRetryBound, last)
			}
			return fmt.Errorf("GET %s: not served within %s (last: %s)", url, timeout, last)
		case <-time.After(poll):
		}
	}
}

// searchMetricsClient is an HTTP client for karmada-search's secure port:
// TLS verified against the control plane's CA (which signed its serving
// certificate) and, if admin, karmada-apiserver's admin bearer token.
func (e *env) searchMetricsClient(admin bool) (*http.Client, error) {
	cfg := &rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: e.cp.CAData()}}
	if admin {
		cfg.BearerToken = e.cp.API.AdminConfig().BearerToken
	}
	return rest.HTTPClientFor(cfg)
}

// scrapeSearch reads karmada-search's /metrics as karmada-apiserver's
// admin.
func (e *env) scrapeSearch(ctx context.Context, url string) (karmada.Metrics, error) {
	client, err := e.searchMetricsClient(true)
	if err != nil {
		return nil, err
	}
	return membercredmetrics.Scrape(ctx, client, url)
}

// searchMetricsAuth says what karmada-search's /metrics answers without
// credentials and with the admin's token: the evidence for what a scraper
// needs.
func (e *env) searchMetricsAuth(ctx context.Context, url string) string {
	var out []string
	for _, admin := range []bool{false, true} {
		who := "anonymous"
		if admin {
			who = "admin bearer token"
		}
		client, err := e.searchMetricsClient(admin)
		if err != nil {
			return err.Error()
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err.Error()
		}
		resp, err := client.Do(req)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", who, err))
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		out = append(out, fmt.Sprintf("%s: %s", who, resp.Status))
	}
	return "GET " + url + " " + strings.Join(out, "; ")
}
