package scale

import (
	"strconv"
	"strings"
	"time"
)

// Upstream's limits on the controller-manager's client of
// karmada-apiserver (--kube-api-qps, --kube-api-burst): one token bucket
// shared by every controller of the manager.
const (
	upstreamKubeAPIQPS   = 40.0
	upstreamKubeAPIBurst = 60
)

// ClientLimit is the controller-manager's QPS and burst to
// karmada-apiserver under flags (upstream's unless they set them; a value
// the binary would refuse is left to the binary).
func ClientLimit(flags []string) (qps float64, burst int) {
	qps, burst = upstreamKubeAPIQPS, upstreamKubeAPIBurst
	for _, f := range flags {
		name, value, _ := strings.Cut(f, "=")
		switch name {
		case "--kube-api-qps":
			if v, err := strconv.ParseFloat(value, 64); err == nil && v > 0 {
				qps = v
			}
		case "--kube-api-burst":
			if v, err := strconv.Atoi(value); err == nil && v > 0 {
				burst = v
			}
		}
	}
	return qps, burst
}

// ControllerManagerClientRequests counts the controller-manager's requests
// to karmada-apiserver that share its client's token bucket: every call of
// its user agent but events, which controller-runtime's event recorder
// sends through a client (and bucket) of its own.
func (r Requests) ControllerManagerClientRequests() int {
	const agent = ControllerManager + " "
	n := 0
	for call, c := range r.ByCall {
		rest, ok := strings.CutPrefix(call, agent)
		if !ok || strings.HasSuffix(rest, " events") {
			continue
		}
		n += c
	}
	return n
}

// LeastClientTime is the least time n requests take through a token
// bucket of qps refilled, burst deep: none within the burst, then one per
// 1/qps. A round of recovery cannot be shorter than its requests' share.
func LeastClientTime(n int, qps float64, burst int) time.Duration {
	if n <= burst || qps <= 0 {
		return 0
	}
	return time.Duration(float64(n-burst) / qps * float64(time.Second))
}
