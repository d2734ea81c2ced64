package node

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// retriedToCompletion names the Job that owns pod p, a pod that failed,
// when that Job has completed since: the Job controller retried the pod
// (within its backoffLimit) and a later one succeeded. The Karmada chart's
// post-install Job applies its static resources with kubectl against a
// karmada-apiserver that may still be starting; its first pod can fail and
// the Job's second one succeed, which helm --wait counts as installed.
// Any other failed pod is a failure.
func retriedToCompletion(p *corev1.Pod, jobs []batchv1.Job) (string, bool) {
	if p.Status.Phase != corev1.PodFailed {
		return "", false
	}
	for _, o := range p.OwnerReferences {
		if o.Kind != "Job" {
			continue
		}
		for i := range jobs {
			j := &jobs[i]
			if j.UID != o.UID {
				continue
			}
			for _, c := range j.Status.Conditions {
				if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
					return j.Name, true
				}
			}
		}
	}
	return "", false
}

func TestRetriedToCompletion(t *testing.T) {
	job := func(uid string, complete bool) batchv1.Job {
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "rel-static-resource", UID: types.UID("uid-" + uid)}}
		if complete {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		} else {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
		}
		return j
	}
	pod := func(phase corev1.PodPhase, owner string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rel-static-resource-cdvt9"}, Status: corev1.PodStatus{Phase: phase}}
		if owner != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: "rel-static-resource", UID: types.UID("uid-" + owner)}}
		}
		return p
	}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		jobs []batchv1.Job
		want bool
	}{
		{"failed, its Job completed by a retry", pod(corev1.PodFailed, "a"), []batchv1.Job{job("a", true)}, true},
		{"failed, its Job failed", pod(corev1.PodFailed, "a"), []batchv1.Job{job("a", false)}, false},
		{"failed, its Job gone", pod(corev1.PodFailed, "a"), nil, false},
		{"failed, another Job of the same name completed", pod(corev1.PodFailed, "a"), []batchv1.Job{job("b", true)}, false},
		{"failed, no Job", pod(corev1.PodFailed, ""), []batchv1.Job{job("a", true)}, false},
		{"running", pod(corev1.PodRunning, "a"), []batchv1.Job{job("a", true)}, false},
	} {
		name, got := retriedToCompletion(c.pod, c.jobs)
		if got != c.want || (got && name != "rel-static-resource") {
			t.Errorf("%s: retriedToCompletion = %q, %v; want %v", c.name, name, got, c.want)
		}
	}
}
