package scale

import (
	"testing"
	"time"
)

func TestControllerManagerClientBudget(t *testing.T) {
	r := Requests{ByCall: map[string]int{
		"karmada-controller-manager update works":       100,
		"karmada-controller-manager get deployments":    150,
		"karmada-controller-manager patch events":       50, // the event recorder's own client
		"karmada-controller-manager create events":      5,
		"karmada-scheduler patch resourcebindings":      200,
		"karmada-controller-manager-x update works":     7, // another agent
		"karmada-controller-manager get (non-resource)": 1,
	}}
	if got := r.ControllerManagerClientRequests(); got != 251 {
		t.Errorf("ControllerManagerClientRequests = %d, want 251 (events and other agents apart)", got)
	}
	for _, c := range []struct {
		n     int
		qps   float64
		burst int
		want  time.Duration
	}{{251, 40, 60, 4775 * time.Millisecond}, {60, 40, 60, 0}, {10, 40, 60, 0}, {1060, 400, 600, 1150 * time.Millisecond}} {
		if got := LeastClientTime(c.n, c.qps, c.burst); got != c.want {
			t.Errorf("LeastClientTime(%d, %v, %d) = %s, want %s", c.n, c.qps, c.burst, got, c.want)
		}
	}
	if q, b := ClientLimit(nil); q != 40 || b != 60 {
		t.Errorf("upstream's limit = %v, %d", q, b)
	}
	if q, b := ClientLimit([]string{"--rate-limiter-qps=1000", "--kube-api-qps=400", "--kube-api-burst=600"}); q != 400 || b != 600 {
		t.Errorf("raised limit = %v, %d", q, b)
	}
}
