//go:build e2e

package karmadacp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/controlplane"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

// secretRead is a kind of request that can return the member's Secret:
// which component sent it, with which verb, for which scope.
type secretRead struct {
	component, verb, scope string
}

func (r secretRead) String() string { return r.component + " " + r.verb + " " + r.scope }

// secretReads counts, in karmada-apiserver's audit events, the reads that
// can return member's Secret (a GET of it, a LIST or WATCH of its
// namespace or of every namespace), by the sending component (the user
// agent's program name). The suite's own clients are left out: they are
// the stimulus, not what is measured.
func secretReads(events []AuditEvent, member string) map[secretRead]int {
	out := map[secretRead]int{}
	seen := map[string]bool{}
	for _, e := range events {
		ref := e.ObjectRef
		if ref == nil || ref.Resource != "secrets" || ref.Subresource != "" {
			continue
		}
		switch e.Verb {
		case "get", "list", "watch":
		default:
			continue
		}
		if ref.Namespace != "" && ref.Namespace != karmadacp.ClusterNamespace {
			continue
		}
		if ref.Name != "" && ref.Name != member {
			continue
		}
		component, _, _ := strings.Cut(e.UserAgent, "/")
		if !strings.HasPrefix(component, "karmada-") {
			continue
		}
		if e.AuditID != "" {
			if seen[e.AuditID] {
				continue
			}
			seen[e.AuditID] = true
		}
		scope := "secret " + ref.Namespace + "/" + ref.Name
		if ref.Name == "" {
			scope = "namespace " + ref.Namespace
			if ref.Namespace == "" {
				scope = "all namespaces"
			}
		}
		out[secretRead{component, e.Verb, scope}]++
	}
	return out
}

func formatReads(reads map[secretRead]int) string {
	if len(reads) == 0 {
		return "none"
	}
	keys := slices.SortedFunc(maps.Keys(reads), func(a, b secretRead) int { return strings.Compare(a.String(), b.String()) })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, reads[k]))
	}
	return strings.Join(parts, "; ")
}

// secretReadsSettle follows the landing, so that a read a component makes
// once the workload is applied (a status update, an informer started for
// it) is inside the window. It is a fixed part of the window, the same for
// both builds, not a bound on anything: the counts, not the time, are
// compared. Far below the 5-minute token refresh period, so no periodic
// re-read of either build falls in it.
const secretReadsSettle = 10 * time.Second

// testSecretReads is issue 26's rule 1: with no rotation, the patched
// binaries read member Secrets from karmada-apiserver exactly as pristine
// ones do (the CA bundle comes from the token's reads, no request of its
// own). Each build gets a control plane of its own, in turn, with
// karmada-controller-manager, karmada-search and karmada-metrics-adapter,
// the same stimulus (join, ResourceRegistry, a propagated Deployment), and
// its karmada-apiserver's audit log is counted.
func testSecretReads(t *testing.T, _ karmadacp.Build) {
	s := begin(t, "secret-reads", string(karmadacp.Patched), append(slices.Clone(standIns),
		"karmada-apiserver writes an audit log (Metadata level, no bodies); the scenario counts the GETs of member1's Secret and the LISTs and WATCHes of Secrets by the Karmada components",
		fmt.Sprintf("the window: from the control plane's start to %s after the Deployment landed on member1; no rotation", secretReadsSettle))...)
	counts := map[karmadacp.Build]map[secretRead]int{}
	for _, b := range []karmadacp.Build{karmadacp.Pristine, karmadacp.Patched} {
		t.Run(string(b), func(t *testing.T) {
			e := newEnv(t, b, withSearch(), withMetricsAdapter(), withAPIServerAudit())
			s.Timing("control-plane-start-"+string(b), e.started)
			reads, err := e.secretReadsWindow(t.Context(), s)
			if err != nil {
				s.Fatalf("%s: %v", b, err)
			}
			s.Notef("%s: Secret reads from karmada-apiserver: %s", b, formatReads(reads))
			counts[b] = reads
		})
	}
	pristine, patched := counts[karmadacp.Pristine], counts[karmadacp.Patched]
	if pristine == nil || patched == nil {
		s.Fatalf("a build's window did not complete (pristine %v, patched %v)", pristine != nil, patched != nil)
	}
	if len(pristine) == 0 {
		s.Fatalf("pristine's audit log shows no Secret read by a Karmada component: the audit log or the filter is wrong, the comparison would prove nothing")
	}
	if !maps.Equal(pristine, patched) {
		s.Outcome(e2ereport.Fail, "the patched binaries' Secret reads differ from pristine's: patched %s; pristine %s", formatReads(patched), formatReads(pristine))
		return
	}
	s.Outcome(e2ereport.Pass, "the patched binaries read member1's Secret from karmada-apiserver exactly as pristine ones do (%d kinds of request, the same count of each)", len(patched))
}

// secretReadsWindow joins member1, registers it with karmada-search,
// propagates a Deployment to it, waits secretReadsSettle and returns the
// Secret reads of the audit log so far.
func (e *env) secretReadsWindow(ctx context.Context, s *e2ereport.Run) (map[secretRead]int, error) {
	e.joinMember1(ctx, s)
	if _, err := e.cp.API.Dynamic().Resource(karmadacp.ResourceRegistryGVR).Create(ctx, ResourceRegistry(registryName, memberName), metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating ResourceRegistry %s: %w", registryName, err)
	}
	if _, err := e.cp.API.Dynamic().Resource(PropagationPolicyGVR).Namespace(workloadNamespace).Create(ctx, PropagationPolicy(workloadNamespace, policyName, memberName), metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating PropagationPolicy %s/%s: %w", workloadNamespace, policyName, err)
	}
	if _, err := e.cp.API.Kubernetes().AppsV1().Deployments(workloadNamespace).Create(ctx, Deployment(workloadNamespace, "web", policyName, 1), metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating Deployment %s/web on Karmada: %w", workloadNamespace, err)
	}
	if _, err := e.waitLanded(ctx, "web", 1, landTimeout); err != nil {
		return nil, err
	}
	select {
	case <-time.After(secretReadsSettle):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	events, err := controlplane.ReadAudit(e.apiAudit)
	if err != nil {
		return nil, err
	}
	return secretReads(events, memberName), nil
}
