//go:build e2e

package estimator

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/holdfast-dist/holdfast/e2e/karmada"
	"github.com/holdfast-dist/holdfast/internal/e2ereport"
	"github.com/holdfast-dist/holdfast/internal/harness/karmadacp"
)

// The estimator's log lines the scenarios quote.
var (
	// listUnauthorized: a reflector's LIST refused with 401 (client-go's
	// "Failed to watch" line carries "failed to list <type>: Unauthorized").
	listUnauthorized = regexp.MustCompile(`Unauthorized`)
	// unknownAuthority: a request whose TLS handshake the CA the client
	// trusts does not verify.
	unknownAuthority = regexp.MustCompile(`x509: certificate signed by unknown authority`)
	// pickedUpToken and pickedUpCA: pkg/membercred's KubeconfigCredential
	// taking a changed kubeconfig (patched build only).
	pickedUpToken = regexp.MustCompile(`Picked up a rotated bearer token from the kubeconfig`)
	pickedUpCA    = regexp.MustCompile(`Picked up a changed certificate authority from the kubeconfig`)
	pickedUpCert  = regexp.MustCompile(`Picked up a rotated client certificate from the kubeconfig`)
)

// begin starts recording a scenario, one row of the suite's report. What
// the row must show is e2ereport.Catalog's, not the suite's.
func begin(t *testing.T, name, binary string, how ...string) *e2ereport.Run {
	return recorder.Begin(t, e2ereport.Scenario{Name: name, Binary: binary, Notes: slices.Concat(standIns, how)})
}

// testTokenRotation: the estimator's token rotated the way an operator (or
// Karmada's own rotation) does it: a token of another ServiceAccount
// written into the kubeconfig Secret (the volume's ..data swapped), then
// the old ServiceAccount deleted and created again, so the old token gets
// 401. The member's kube-apiserver is then restarted, so every watch has
// to be opened again (what an API server rollout or a watch's timeout, 5
// to 10 minutes, does), and a Node is created: the answer must grow from 6
// to 9. Pristine: the informers keep the token read at start, are refused
// (401) and never see the Node: the answer stays 6 (RED). Patched: they
// follow the file.
func testTokenRotation(t *testing.T, b karmadacp.Build) {
	s := begin(t, "token-rotation", string(b), grpcNote)
	e := newEnv(t, s, b)
	ctx := t.Context()

	newToken, err := e.member.ServiceAccountToken(ctx, estimatorNamespace, rotatedAccount, 0)
	s.Check(err)
	cfg, err := e.kubeconfig(newToken, e.member.CAData())
	s.Check(err)
	published := time.Now()
	s.Check(e.vol.Publish(map[string][]byte{volumeKey: cfg}))
	s.Check(e.member.RevokeServiceAccount(ctx, estimatorNamespace, firstAccount, e.token))
	rotated := time.Now()
	s.MarkAt(e2ereport.EventRotation, rotated)
	s.Notef("rotated: the kubeconfig volume's ..data swapped to a token of ServiceAccount %s/%s, then %s (the old token's) deleted and created again; the old token is refused (%s after the swap)",
		estimatorNamespace, rotatedAccount, firstAccount, time.Since(published).Round(time.Millisecond))

	logMark := len(e.est.Log())
	killed := time.Now()
	s.Check(e.member.Restart(ctx))
	restarted := time.Now()
	s.Timing("member-restart", restarted.Sub(killed))
	e.afterRotation(ctx, s, rotation{published: published, rotated: rotated, restarted: restarted, logMark: logMark, refused: listUnauthorized, pickedUp: pickedUpToken})

	// What the member saw of the estimator since the swap.
	events, err := e.estimatorRequests(published)
	s.Check(err)
	newAccepted := requestsBy(events, accountUser(rotatedAccount), 200)
	refused := requestsBy(events, "", 401)
	s.Notef("member audit log since the swap: %d requests of the estimator authenticated as %s (the new token), %d refused with 401", newAccepted, rotatedAccount, refused)
	if b == karmadacp.Patched && newAccepted == 0 {
		s.Errorf("the member's audit log has no request of the estimator authenticated with the new token since the swap")
	}
	if b == karmadacp.Pristine && newAccepted > 0 {
		s.Errorf("the pristine estimator sent %d requests with the new token: it read the rotated kubeconfig", newAccepted)
	}
}

// testCARotation: the member's kube-apiserver restarted on the same port
// with a serving certificate of a CA it never presented (a renewed CA),
// then the kubeconfig Secret's certificate-authority-data replaced by the
// new CA (..data swapped), then a Node created: the answer must grow from
// 6 to 9. Pristine: the informers keep the CA read at start, every
// handshake fails with x509 and they never see the Node: the answer stays
// 6 (RED). Patched: they follow the file.
func testCARotation(t *testing.T, b karmadacp.Build) {
	s := begin(t, "ca-rotation", string(b), grpcNote)
	e := newEnv(t, s, b)
	ctx := t.Context()

	logMark := len(e.est.Log())
	killed := time.Now()
	s.Check(e.member.RestartWithNextCA(ctx))
	// The old CA is no longer accepted from here, as in
	// karmada-control-plane's ca-rotation-replaced.
	restarted := time.Now()
	rotated := restarted
	s.MarkAt(e2ereport.EventRotation, rotated)
	s.Timing("member-restart", restarted.Sub(killed))
	cfg, err := e.kubeconfig(e.token, e.member.CAData())
	s.Check(err)
	published := time.Now()
	s.Check(e.vol.Publish(map[string][]byte{volumeKey: cfg}))
	s.Notef("rotated: member1's kube-apiserver restarted serving a certificate of a new CA (%s), then the kubeconfig volume's ..data swapped to certificate-authority-data holding the new CA only", restarted.Sub(killed).Round(time.Millisecond))
	e.afterRotation(ctx, s, rotation{published: published, rotated: rotated, restarted: restarted, logMark: logMark, refused: unknownAuthority, pickedUp: pickedUpCA})
}

// testCertRotation: the estimator authenticates to the member with a client
// certificate (CN karmada-scheduler-estimator) of a CA the member trusts.
// Rotated: a kubeconfig with a certificate of another trusted CA written
// into the volume (..data swapped), then the first CA removed from the
// member's --client-ca-file, so the first certificate gets 401; member1
// restarted, then a Node created: the answer must grow from 6 to 9.
// Pristine: the informers keep the certificate read at start, are refused
// and never see the Node: the answer stays 6 (RED). Patched: they follow
// the file.
func testCertRotation(t *testing.T, b karmadacp.Build) {
	s := begin(t, "cert-rotation", string(b), grpcNote, certNote)
	e := newEnv(t, s, b, true)
	ctx := t.Context()

	cfg, err := e.certKubeconfig(e.certs.Next, e.member.CAData())
	s.Check(err)
	published := time.Now()
	s.Check(e.vol.Publish(map[string][]byte{volumeKey: cfg}))
	s.Check(e.certs.WithdrawFirst())
	s.Check(e.waitFirstRefused(ctx))
	rotated := time.Now()
	s.MarkAt(e2ereport.EventRotation, rotated)
	s.Notef("rotated: the kubeconfig volume's ..data swapped to a client certificate of the second CA, then the first CA removed from member1's --client-ca-file; the first certificate is refused (%s after the swap)",
		rotated.Sub(published).Round(time.Millisecond))

	logMark := len(e.est.Log())
	killed := time.Now()
	s.Check(e.member.Restart(ctx))
	restarted := time.Now()
	s.Timing("member-restart", restarted.Sub(killed))
	e.afterRotation(ctx, s, rotation{published: published, rotated: rotated, restarted: restarted, logMark: logMark, refused: listUnauthorized, pickedUp: pickedUpCert})
}

// rotation is what afterRotation needs of the scenario's rotation.
type rotation struct {
	// published is when the new kubeconfig was swapped in; rotated when
	// the old credential stopped working (the old token refused, or the
	// member serving a certificate of the new CA); restarted when the
	// member's kube-apiserver was ready again after its restart, which
	// makes every watch reconnect.
	published, rotated, restarted time.Time
	// logMark is the estimator's log length before the member went down.
	logMark int
	// refused is the estimator's log line of a request the rotation makes
	// fail; pickedUp the patched build's line taking the new kubeconfig.
	refused, pickedUp *regexp.Regexp
}

// afterRotation creates the Node that changes the right answer and records
// what the build shows: the patched build must answer 9 within
// recoverTimeout; the pristine build is watched through its blind window.
func (e *env) afterRotation(ctx context.Context, s *e2ereport.Run, r rotation) {
	s.Check(e.createNode(ctx, addedNode))
	created := time.Now()
	nodeMark := len(e.est.Log())
	if e.build == karmadacp.Patched {
		e.recovered(ctx, s, r, created)
	} else {
		e.blind(ctx, s, r, created, nodeMark)
	}
	// The first refused request since the member went down, when the
	// estimator logged it (either build: the patched one's informers may be
	// refused until the new kubeconfig is read).
	if lines := karmada.Lines(e.est.Log(), r.logMark, r.refused); len(lines) > 0 {
		if at, ok := klogTime(lines[0], time.Now(), time.Local); ok {
			s.MarkAt(e2ereport.EventFirstFailure, at)
		}
	}
	s.Notef("holdfast_kubeconfig_credential series: %s", e.credentialMetrics(ctx))
	if e.build == karmadacp.Patched {
		e.checkDashboard(ctx, s)
	}
	if e.est.Exited() {
		s.Errorf("%s exited (code %d); a member credential must never stop it", e.est.Name(), e.est.ExitCode())
	}
}

// recovered waits for the patched build to answer the scheduler's question
// right (9) and reports how long after the kubeconfig swap, the member's
// restart and the Node's creation that came (each including up to one poll
// of observation delay).
func (e *env) recovered(ctx context.Context, s *e2ereport.Run, r rotation, created time.Time) {
	if err := e.waitAnswer(ctx, answerAfter, recoverTimeout); err != nil {
		s.Outcome(e2ereport.Fail, "did not recover: %v", err)
		return
	}
	now := time.Now()
	s.Mark(e2ereport.EventRecovery)
	s.Timing("swap-to-correct-answer", now.Sub(r.published))
	s.Timing("rotation-to-correct-answer", now.Sub(r.rotated))
	s.Timing("restart-to-correct-answer", now.Sub(r.restarted))
	s.Timing("node-to-correct-answer", now.Sub(created))
	log := e.est.Log()
	if lines := karmada.Lines(log, r.logMark, r.pickedUp); len(lines) > 0 {
		s.Notef("evidence: %s", lines[0])
	} else {
		s.Errorf("no %q line in the estimator's log since the rotation", r.pickedUp)
	}
	refused := karmada.Lines(log, r.logMark, r.refused)
	s.Notef("estimator log lines matching %q since the member went down: %d", r.refused, len(refused))
	s.Outcome(e2ereport.Pass, "GREEN: MaxAvailableReplicas answered %d (Node %s, created after the rotation, counted) %s after the old credential stopped working (%s after the kubeconfig swap), without an estimator restart",
		answerAfter, addedNode.name, now.Sub(r.rotated).Round(time.Millisecond), now.Sub(r.published).Round(time.Millisecond))
}

// blind asks the pristine build, which should never count the Node, for
// as short a window as a convincing negative allows: it ends blindSettle
// after the estimator logged a refused request (r.refused) with the Node in
// place, which shows its informers tried again with what they read at start
// and failed. A right answer (9) at any point ends it early (the bug is not
// reproduced). No refusal within reflectorRetryBound is inconclusive: the
// scenario fails.
func (e *env) blind(ctx context.Context, s *e2ereport.Run, r rotation, created time.Time, nodeMark int) {
	deadline := created.Add(reflectorRetryBound)
	var refusal string
	var refusedAt time.Time
	answers := map[string]int{} // what the estimator answered, how often
	for {
		got, err := e.answer(ctx)
		switch {
		case err == nil && got == answerAfter:
			s.Outcome(e2ereport.Pass, "the pristine build answered %d, counting Node %s created after the rotation: the scenario no longer reproduces the bug", got, addedNode.name)
			return
		case err != nil:
			answers["error: "+err.Error()]++
		default:
			answers[fmt.Sprintf("%d", got)]++
		}
		if refusal == "" {
			if lines := karmada.Lines(e.est.Log(), nodeMark, r.refused); len(lines) > 0 {
				refusal, refusedAt = lines[0], time.Now()
			}
		}
		switch {
		case refusal != "" && time.Since(refusedAt) >= blindSettle:
			s.Timing("blind-window", time.Since(created))
			s.Notef("evidence: %s", refusal)
			s.Outcome(e2ereport.RedAsExpected, "RED: MaxAvailableReplicas never answered %d once Node %s existed (answers since: %s); %s after its informers were refused (%q) with the Node in place it still did not (%d such lines since the member went down)",
				answerAfter, addedNode.name, tally(answers), blindSettle, r.refused, len(karmada.Lines(e.est.Log(), r.logMark, r.refused)))
			return
		case e.est.Exited():
			s.Fatalf("%s exited (code %d) during the observation%s", e.est.Name(), e.est.ExitCode(), panicLine(e.est.Log()))
		case time.Now().After(deadline):
			s.Fatalf("inconclusive: the estimator logged no %q line within %s after the Node was created, and did not answer %d either (answers: %s)", r.refused, reflectorRetryBound, answerAfter, tally(answers))
		}
		select {
		case <-ctx.Done():
			s.Fatalf("%v", ctx.Err())
		case <-time.After(poll):
		}
	}
}

// tally is answers, most frequent first: "6 (x101)".
func tally(answers map[string]int) string {
	keys := slices.Collect(maps.Keys(answers))
	slices.SortFunc(keys, func(a, b string) int {
		if c := answers[b] - answers[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (x%d)", k, answers[k])
	}
	return strings.Join(parts, ", ")
}

// testMaxAvailableReplicas: without a rotation, what Karmada's scheduler
// asks the estimator over gRPC follows the member's Nodes, the same on both
// builds (the drop-in rule): 6 one-CPU replicas on Nodes of 4 and 2 CPUs,
// 9 once a Node of 3 CPUs has been created.
func testMaxAvailableReplicas(t *testing.T, b karmadacp.Build) {
	s := begin(t, "max-available-replicas", string(b), grpcNote)
	e := newEnv(t, s, b)
	ctx := t.Context()
	s.Check(e.createNode(ctx, addedNode))
	created := time.Now()
	if err := e.waitAnswer(ctx, answerAfter, recoverTimeout); err != nil {
		s.Fatalf("after Node %s was created: %v", addedNode.name, err)
	}
	s.Timing("node-to-correct-answer", time.Since(created))
	s.Outcome(e2ereport.Pass, "MaxAvailableReplicas (cpu 1 per replica) answered %d, then %d once Node %s (3 CPUs) existed", answerBefore, answerAfter, addedNode.name)
}
