//go:build e2e

package node

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/holdfast-dist/holdfast/internal/harness/node"
)

// pristineWorker is upstream's worker image name at the pin, built from
// the pristine tree (docs/node-images.md).
const pristineWorker = "docker.io/aveshasystems/worker-operator:v1.6.4"

// dropInWatch is how long each step's pod must keep restartCount 0 after
// Ready. The chart's liveness probe (initialDelay 15 s, period 20 s, three
// failures) kills a never-healthy container about 55 s after it starts,
// and Ready comes at least 5 s after the start (readiness initialDelay):
// 60 s from Ready covers the latest probe kill; an exit on startup shows
// sooner.
const dropInWatch = 60 * time.Second

// pristineWorkerLayout is the pristine worker's stand-in layout, from the
// run's one stand-in build. The build runs every time: its stamps make it a
// few seconds when nothing changed, and a layout left by an older tree or
// tool version is rebuilt, not trusted.
func pristineWorkerLayout(t *testing.T, standIns *standInBuild) string {
	imgs, _, err := standIns.wait(t)
	if err != nil {
		t.Fatalf("building the stand-in images: %v", err)
	}
	img, ok := imgs[pristineWorker]
	if !ok {
		t.Fatalf("the stand-ins have no %s", pristineWorker)
	}
	return img.Layout
}

// dropInStep is what one step of the drop-in left running.
type dropInStep struct {
	name  string
	image string
	pod   *corev1.Pod
}

func testWorkerDropIn(t *testing.T, standIns *standInBuild, n *node.Node, chart string, common []string, holdfast node.Image, holdfastLayout string) {
	pristineLayout := pristineWorkerLayout(t, standIns)
	sc := beginScenario(t, suiteWorkerNode, "drop-in: pristine v1.6.4 image, helm upgrade to holdfast's (defaults), helm rollback: Ready, no restart, securityContext in /proc",
		fmt.Sprintf("setup: holdfast's chart %s, secondary unset; step 1 with the pristine stand-in %s (its layout imported), step 2 `helm upgrade` with the same values "+
			"but the image's (the chart's default, %s), step 3 `helm rollback worker 1`; each step: helm --wait, the one worker pod Ready, restartCount 0 over %s, "+
			"container spec but its image the same as step 1's, and /proc/<pid>/status of the container's main process (found by its cgroup) against the rendered securityContext and the image's user",
			filepath.Base(chart), pristineWorker, holdfast.ByDigest(), dropInWatch))
	ctx := t.Context()
	pristine, err := n.ImportLayout(ctx, pristineLayout)
	sc.Check(err)
	pristineUID, err := imageUID(pristineLayout)
	sc.Check(err)
	holdfastUID, err := imageUID(holdfastLayout)
	sc.Check(err)
	pristineValues := []string{"--set", "image.registry=docker.io", "--set", "image.repository=aveshasystems/worker-operator",
		"--set", "image.tag=v1.6.4", "--set", "image.digest="}

	steps := []struct {
		name, image string
		uid         int
		helm        []string
	}{
		{"install-pristine", pristine.Name, pristineUID, append(append([]string{"install", "worker", chart}, common...), pristineValues...)},
		{"upgrade-holdfast", holdfast.ByDigest(), holdfastUID, append([]string{"upgrade", "worker", chart}, common...)},
		{"rollback-pristine", pristine.Name, pristineUID, []string{"rollback", "worker", "1", "--namespace", workerNamespace, "--wait", "--timeout", "5m"}},
	}
	var done []dropInStep
	defer uninstall(t, n)
	for _, s := range steps {
		begin := time.Now()
		if out, err := n.Helm(ctx, s.helm...); err != nil {
			sc.Fatalf("%s: %v\n%s", s.name, err, out)
		}
		// helm --wait returns once the Deployment is available; the
		// replaced pod may still be terminating.
		var pod *corev1.Pod
		sc.Check(waitFor(ctx, s.name+": one Ready worker pod of "+s.image, func() bool {
			p, err := workerPod(ctx, n)
			if err == nil && p.Spec.Containers[0].Image == s.image && podReady(p) {
				pod = p
				return true
			}
			return false
		}))
		sc.Timing(s.name+"-to-ready", time.Since(begin))
		ready := time.Now()
		for time.Since(ready) < dropInWatch {
			p, err := workerPod(ctx, n)
			sc.Check(err)
			if r := restarts(p); r != 0 || p.UID != pod.UID || !podReady(p) {
				sc.Fatalf("%s: %s after Ready the worker restarted or went unready: %s", s.name, time.Since(ready).Round(time.Second), podSummary(p))
			}
			select {
			case <-ctx.Done():
				sc.Fatalf("%v", ctx.Err())
			case <-time.After(2 * time.Second):
			}
		}
		c := pod.Spec.Containers[0]
		if len(done) > 0 {
			first := done[0].pod.Spec.Containers[0]
			first.Image, c.Image = "", ""
			first.VolumeMounts, c.VolumeMounts = withoutTokenMount(first.VolumeMounts), withoutTokenMount(c.VolumeMounts)
			if !reflect.DeepEqual(first, c) {
				sc.Errorf("%s: the worker container differs from the pristine install's in more than its image:\n%+v\nwas\n%+v", s.name, c, first)
			}
		}
		var allowEscalation *bool
		if c.SecurityContext != nil {
			allowEscalation = c.SecurityContext.AllowPrivilegeEscalation
		}
		want := wantFor(runAsUser(pod), s.uid, allowEscalation)
		pid, status, err := podMainStatus(pod)
		if err != nil {
			sc.Fatalf("%s: %v", s.name, err)
		}
		for _, d := range checkProcStatus(status, want) {
			sc.Errorf("%s: pod %s, process %d: %s", s.name, pod.Name, pid, d)
		}
		// The same status must fail a different expectation: otherwise
		// the read proved nothing (an empty or foreign status).
		other := want
		other.UID++
		if len(checkProcStatus(status, other)) == 0 {
			sc.Errorf("%s: process %d's status also matches uid %d: it does not say who runs the worker", s.name, pid, other.UID)
		}
		sc.Notef("%s: %s Ready, restartCount 0 over %s; process %d: uid %d, CapEff %s, NoNewPrivs %s", s.name, s.image, dropInWatch, pid, want.UID, want.CapEff, want.NoNewPrivs)
		done = append(done, dropInStep{name: s.name, image: s.image, pod: pod})
	}
	sc.PassWithTest()
}

// runAsUser is the user the container's securityContext or, failing that,
// the pod's sets; nil means the image's.
func runAsUser(p *corev1.Pod) *int64 {
	if sc := p.Spec.Containers[0].SecurityContext; sc != nil && sc.RunAsUser != nil {
		return sc.RunAsUser
	}
	if p.Spec.SecurityContext != nil {
		return p.Spec.SecurityContext.RunAsUser
	}
	return nil
}

// withoutTokenMount leaves out the ServiceAccount token's mount, whose
// volume name the API server generates for each pod.
func withoutTokenMount(ms []corev1.VolumeMount) []corev1.VolumeMount {
	var out []corev1.VolumeMount
	for _, m := range ms {
		if !strings.HasPrefix(m.Name, "kube-api-access-") {
			out = append(out, m)
		}
	}
	return out
}
