//go:build e2e

package karmadacp

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

const (
	// memberName is the member's Cluster name on Karmada.
	memberName = "member1"
	// workloadNamespace exists on Karmada and on every member from the
	// start (kube-apiserver creates it), so placing a workload needs no
	// namespace propagation first.
	workloadNamespace = "default"
	policyName        = "propagation"
	// readyTimeout bounds a joined member becoming Ready: one status
	// period once the controller-manager sees the Cluster, plus margin
	// for a busy runner.
	readyTimeout = 2 * time.Minute
	// landTimeout bounds a workload reaching the member: detector,
	// scheduler, binding and execution controllers each take well under a
	// second when they work; the rest is margin for a busy runner. A
	// pristine build that fails a step waits this long for it.
	landTimeout = 2 * time.Minute
	// statusTimeout bounds the patched build's status aggregation
	// (member informer event, Work status, binding status, template
	// status: about a second when it works).
	statusTimeout = 2 * time.Minute
	// reflectorRetryBound bounds waiting for a member informer's next
	// attempt after the status was written: client-go's reflector waits
	// at most [30s, 60s) between attempts; the rest is margin. A pristine
	// build whose informer has not tried again by then leaves the window
	// inconclusive, which fails the scenario rather than calling it RED.
	reflectorRetryBound = 90 * time.Second
	// pristineLandWindow is how long the pristine build gets for a step
	// the patched one takes under a second for: the execution controller
	// retries a failed Work with controller-runtime's per-item exponential
	// backoff (5 ms doubling), so a minute holds a dozen retries, each
	// refused the same way.
	pristineLandWindow = time.Minute
	// blindSettle is how long the pristine build is still watched after a
	// member informer was refused (401) with the status in place: ten
	// times what the aggregation takes when it works.
	blindSettle = 10 * time.Second
	poll        = 200 * time.Millisecond
	// policyPermanentIDLabel is the label karmada-webhook's
	// PropagationPolicy mutation sets.
	policyPermanentIDLabel = "propagationpolicy.karmada.io/permanent-id"
)

// testPropagation is issue 14's scenario 1, propagation through rotation.
func testPropagation(t *testing.T, b karmadacp.Build) {
	e := newEnv(t, b)
	s := begin(t, "propagation", string(b), standIns...)
	ctx := t.Context()
	s.Timing("control-plane-start", e.started)

	m := e.joinMember1(ctx, s)

	karmadaKube := e.cp.API.Kubernetes()
	pp, err := e.cp.API.Dynamic().Resource(PropagationPolicyGVR).Namespace(workloadNamespace).Create(ctx, PropagationPolicy(workloadNamespace, policyName, memberName), metav1.CreateOptions{})
	if err != nil {
		s.Fatalf("creating PropagationPolicy %s/%s: %v", workloadNamespace, policyName, err)
	}
	// karmada-webhook's mutating webhook gives every policy its permanent
	// ID: the label shows the webhooks are in the path, not bypassed.
	if pp.GetLabels()[policyPermanentIDLabel] == "" {
		s.Fatalf("PropagationPolicy %s/%s has no %s label: karmada-webhook did not mutate it", workloadNamespace, policyName, policyPermanentIDLabel)
	}
	created := time.Now()
	if _, err := karmadaKube.AppsV1().Deployments(workloadNamespace).Create(ctx, Deployment(workloadNamespace, "web", policyName, 1), metav1.CreateOptions{}); err != nil {
		s.Fatalf("creating Deployment %s/web on Karmada: %v", workloadNamespace, err)
	}
	work, err := e.waitLanded(ctx, "web", 1, landTimeout)
	if err != nil {
		s.Fatalf("before any rotation: %v", err)
	}
	s.Timing("first-propagation", time.Since(created))
	s.Notef("before the rotation: Deployment %s/web landed on %s (Work %s Applied)", workloadNamespace, memberName, work)

	memberWeb, err := e.member.Kubernetes().AppsV1().Deployments(workloadNamespace).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		s.Fatalf("reading Deployment %s/web on %s: %v", workloadNamespace, memberName, err)
	}
	cm := e.cp.Process(karmadacp.ControllerManager)
	metricsURL := e.cp.MetricsURL(karmadacp.ControllerManager)
	var before karmada.MemberCredential
	if mt, err := karmada.ScrapeMetrics(ctx, metricsURL); err == nil {
		before = mt.MemberCredential(memberName)
	}
	if b == karmadacp.Patched {
		defer countCredentials(s, e.cp, memberName).note()
	}
	rotateMark := len(cm.Log())
	var mark int
	// From before the kill: what the controller-manager logs from here on,
	// it logs about the restarted member.
	_, restarted := rotateAndRestart(ctx, s, m, func() { mark = len(cm.Log()) })

	// After the restart: a new workload and an update of the first.
	if _, err := karmadaKube.AppsV1().Deployments(workloadNamespace).Create(ctx, Deployment(workloadNamespace, "web-2", policyName, 1), metav1.CreateOptions{}); err != nil {
		s.Fatalf("creating Deployment %s/web-2 on Karmada: %v", workloadNamespace, err)
	}
	if err := e.scale(ctx, "web", 2); err != nil {
		s.Fatalf("updating Deployment %s/web on Karmada: %v", workloadNamespace, err)
	}
	// Every step runs whatever the previous one showed, so the report
	// says each place a pristine build breaks, not only the first.
	pristine := b == karmadacp.Pristine
	var broke []string
	fail := func(step string, err error, evidence string) {
		broke = append(broke, step)
		s.Notef("%s: %v", step, err)
		s.Notef("evidence (%s): %s", step, evidence)
	}
	// inconclusive fails the scenario without calling the step RED, and
	// lets the remaining steps run.
	inconclusive := func(step string, err error, refusals string) {
		s.Errorf("%s: inconclusive: %v; no %s logged since the restart", step, err, refusals)
	}
	timeout := landTimeout
	if pristine {
		timeout = pristineLandWindow
	}
	// A landing step's refusals: the execution controller's update
	// refused from its stale copy (409), or its member Deployment
	// informer refused (401). A pristine window that ends with neither
	// shows only that nothing landed in time.
	const landRefusals = "update conflict or member Deployment informer 401"
	landRefusal := func() string { return firstMatch(cm.Log(), mark, UpdateConflict, MemberWatchUnauthorized) }
	want := map[string]int32{}
	_, err = e.waitLanded(ctx, "web-2", 1, timeout)
	switch judgeStep(pristine, err, landRefusal()) {
	case stepPassed:
		s.Timing("restart-to-second-deployment", time.Since(restarted))
		want["web-2"] = 1
	case stepBroke:
		fail("second Deployment lands", err, firstLine(cm.Log(), mark, WorkSyncFailed, MemberWatchUnauthorized, Unauthorized))
	default:
		inconclusive("second Deployment lands", err, landRefusals)
	}
	_, err = e.waitLanded(ctx, "web", 2, timeout)
	switch judgeStep(pristine, err, landRefusal()) {
	case stepPassed:
		s.Timing("restart-to-update", time.Since(restarted))
		want["web"] = 2
	case stepBroke:
		fail("update lands", err, firstLine(cm.Log(), mark, UpdateConflict, WorkSyncFailed, MemberWatchUnauthorized, Unauthorized))
		// An update of the template reaches the member as two Work
		// updates (its annotations first, the replicas once the scheduler
		// placed the new count); a generation that moved shows one of them
		// landed after the restart, changing the member object under the
		// informer that was by then refused.
		if d, err := e.member.Kubernetes().AppsV1().Deployments(workloadNamespace).Get(ctx, "web", metav1.GetOptions{}); err == nil && d.Generation > memberWeb.Generation {
			s.Notef("update lands: on the member, web went from generation %d to %d with %d replica(s): an update landed after the restart, and the execution controller, whose member informer copy never saw it, has had every later one refused (%d updates refused with 409 Conflict since the restart)", memberWeb.Generation, d.Generation, ptr.Deref(d.Spec.Replicas, 1), len(karmada.Lines(cm.Log(), mark, UpdateConflict)))
		}
	default:
		inconclusive("update lands", err, landRefusals)
	}

	// The stand-in for the member's deployment controller and kubelets:
	// the status of both Deployments on the member, checked on Karmada for
	// those that landed as they should (one that did not would not show
	// the latest generation whatever its status).
	for _, name := range []string{"web", "web-2"} {
		if err := e.writeMemberStatus(ctx, name); err != nil {
			s.Fatalf("writing the status of Deployment %s/%s on %s: %v", workloadNamespace, name, memberName, err)
		}
	}
	written := time.Now()
	writtenMark := len(cm.Log())
	switch {
	case len(want) == 0:
		s.Notef("status aggregated: not checked, no Deployment landed after the restart")
	case b == karmadacp.Patched:
		if err := e.waitAggregated(ctx, want, statusTimeout, nil); err != nil {
			fail("status aggregated", err, firstLine(cm.Log(), mark, MemberWatchUnauthorized, Unauthorized))
		} else {
			s.Timing("status-write-to-aggregated", time.Since(written))
			s.Timing("restart-to-aggregated", time.Since(restarted))
		}
	default:
		err := e.waitAggregated(ctx, want, reflectorRetryBound+blindSettle, blindWindow(cm.Log, writtenMark))
		switch judgeStep(pristine, err, "") {
		case stepPassed:
			s.Timing("status-write-to-aggregated", time.Since(written))
		case stepBroke:
			fail("status aggregated", err, firstLine(cm.Log(), writtenMark, MemberWatchUnauthorized))
		default:
			s.Fatalf("%v", err)
		}
	}

	if cm.Exited() {
		s.Errorf("%s exited (code %d); a member credential must never stop it", cm.Name(), cm.ExitCode())
	}
	s.Notef("member Deployment informer 401s logged since the restart: %d", len(karmada.Lines(cm.Log(), mark, MemberWatchUnauthorized)))
	if b == karmadacp.Patched {
		if lines := karmada.Lines(cm.Log(), rotateMark, MemberTokenPickedUp); len(lines) > 0 {
			s.Notef("evidence: %s", lines[0])
		}
		if mt, err := karmada.ScrapeMetrics(ctx, metricsURL); err == nil {
			d := mt.MemberCredential(memberName).Sub(before)
			s.Notef("membercred counters over the rotation and restart: %s", d)
			// Which of membercred's two paths carried the rotation (see
			// docs/e2e.md, issue 16).
			if d.Unauthorized == 0 && d.Refreshes > 0 {
				s.Notef("path: the shared token source re-read the Secret at a client build that found the new token, before the old one was revoked; the restarted watches relisted with the new token, no 401 to replay")
			} else if d.Recovered > 0 {
				s.Notef("path: member 401s replayed with the token re-read from the Secret (%v recovered)", d.Recovered)
			}
		}
	}
	switch {
	case len(broke) == 0 && b == karmadacp.Pristine:
		s.Outcome(e2ereport.Pass, "the pristine build propagated and aggregated status after the rotation: the scenario no longer reproduces the bug")
	case len(broke) == 0:
		s.Outcome(e2ereport.Pass, "GREEN: after rotation, revocation and restart, web-2 and web's update landed and both Deployments' member status was aggregated on Karmada")
	case b == karmadacp.Pristine:
		s.Outcome(e2ereport.RedAsExpected, "RED at %s", strings.Join(broke, "; "))
	default:
		s.Outcome(e2ereport.Fail, "broke at %s", strings.Join(broke, "; "))
	}
}

// waitLanded waits until Deployment name is on the member with replicas
// replicas, and the Work that carries it is Applied; it returns the Work's
// name.
func (e *env) waitLanded(ctx context.Context, name string, replicas int32, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		work, done, detail := e.landed(ctx, name, replicas)
		if done {
			return work, nil
		}
		last = detail
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("Deployment %s/%s did not land on %s with %d replicas within %s (last: %s)", workloadNamespace, name, memberName, replicas, timeout, last)
		case <-time.After(poll):
		}
	}
}

func (e *env) landed(ctx context.Context, name string, replicas int32) (work string, done bool, detail string) {
	d, err := e.member.Kubernetes().AppsV1().Deployments(workloadNamespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", false, "not on the member"
	case err != nil:
		return "", false, err.Error()
	case ptr.Deref(d.Spec.Replicas, 1) != replicas:
		return "", false, fmt.Sprintf("on the member with %d replicas", ptr.Deref(d.Spec.Replicas, 1))
	}
	works, err := e.cp.API.Dynamic().Resource(WorkGVR).Namespace("karmada-es-"+memberName).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", false, err.Error()
	}
	work, applied, err := WorkFor(works.Items, "Deployment", workloadNamespace, name)
	switch {
	case err != nil:
		return "", false, err.Error()
	case work == "":
		return "", false, "on the member, but no Work carries it"
	case !applied:
		return work, false, "on the member, Work " + work + " not Applied"
	}
	return work, true, ""
}

// scale sets Karmada's Deployment's replicas, as a user's update would.
func (e *env) scale(ctx context.Context, name string, replicas int32) error {
	deployments := e.cp.API.Kubernetes().AppsV1().Deployments(workloadNamespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deployments.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Replicas = ptr.To(replicas)
		_, err = deployments.Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
}

// writeMemberStatus is the stand-in for the member's deployment controller:
// it writes ReadyStatus through the status subresource. Karmada's
// execution controller may update the object meanwhile, so a conflict is
// retried on a fresh read.
func (e *env) writeMemberStatus(ctx context.Context, name string) error {
	deployments := e.member.Kubernetes().AppsV1().Deployments(workloadNamespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deployments.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Status = ReadyStatus(d)
		_, err = deployments.UpdateStatus(ctx, d, metav1.UpdateOptions{})
		return err
	})
}

// blindWindow ends the pristine observation blindSettle after a member
// informer's 401 logged from mark on (after the status was written), so
// the informer demonstrably tried again with its frozen token; it returns
// "" while the window is open.
func blindWindow(log func() string, mark int) func() string {
	return refusedWindow(nil, log, mark, MemberWatchUnauthorized)
}

// waitAggregated waits until each Karmada Deployment of want shows its
// ready replicas (Aggregated). With window (pristine), it also ends,
// returning an errBlindWindow, once window returns the refusal that
// closes it; without one within the timeout the window is inconclusive.
func (e *env) waitAggregated(ctx context.Context, want map[string]int32, timeout time.Duration, window func() string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		all := true
		for _, name := range slices.Sorted(maps.Keys(want)) {
			d, err := e.cp.API.Kubernetes().AppsV1().Deployments(workloadNamespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				all, last = false, err.Error()
				break
			}
			if ok, desc := Aggregated(d, want[name]); !ok {
				all, last = false, fmt.Sprintf("Karmada's %s/%s: %s", workloadNamespace, name, desc)
				break
			}
		}
		if all {
			return nil
		}
		if window != nil {
			if refusal := window(); refusal != "" {
				return errBlindWindow{fmt.Sprintf("the member status was not aggregated %s after a member informer was refused with the status in place (%s); %s", blindSettle, refusal, last)}
			}
		}
		select {
		case <-ctx.Done():
			if window != nil {
				return fmt.Errorf("inconclusive: no member informer 401 within %s after the status was written, and no aggregation either (last: %s)", reflectorRetryBound, last)
			}
			return fmt.Errorf("the member status was not aggregated within %s (last: %s)", timeout, last)
		case <-time.After(poll):
		}
	}
}

// firstLine is the first line the controller-manager logged from mark on
// that matches the first of patterns any line matches: the plainest
// evidence there is.
func firstLine(log string, mark int, patterns ...*regexp.Regexp) string {
	if line := firstMatch(log, mark, patterns...); line != "" {
		return line
	}
	return "(nothing logged)"
}

// firstMatch is firstLine, "" when no line matches: the refusal judgeStep
// weighs.
func firstMatch(log string, mark int, patterns ...*regexp.Regexp) string {
	for _, re := range patterns {
		if lines := karmada.Lines(log, mark, re); len(lines) > 0 {
			return lines[0]
		}
	}
	return ""
}
