package scale

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// StatusPeriodEnv sets the controller-manager's
// --cluster-status-update-frequency for a scale run (a Go duration;
// `make scale STATUS_PERIOD=...`); default UpstreamStatusPeriod.
const StatusPeriodEnv = "SCALE_STATUS_PERIOD"

// UpstreamStatusPeriod is Karmada's default
// --cluster-status-update-frequency, what a fleet that only swapped the
// image runs. The e2e scenarios use karmadacp's 2 s to wait less; at
// K = 100 that is 50 member status syncs a second per control plane (each
// a health check and a discovery of the member), five times what such a
// fleet sees, and on two cores it was most of the load every storm was
// measured under.
const UpstreamStatusPeriod = 10 * time.Second

// ParseStatusPeriod reads StatusPeriodEnv: empty is UpstreamStatusPeriod;
// anything else a Go duration of at least a second.
func ParseStatusPeriod(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return UpstreamStatusPeriod, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want a Go duration such as 10s: %w", StatusPeriodEnv, s, err)
	}
	if d < time.Second {
		return 0, fmt.Errorf("%s=%q: want at least 1s", StatusPeriodEnv, s)
	}
	return d, nil
}

// ParseKs reads `make scale K=10,50,100`: fleet sizes, comma-separated,
// each at least 1, kept in the order given.
func ParseKs(s string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		k, err := strconv.Atoi(f)
		if err != nil || k < 1 {
			return nil, fmt.Errorf("fleet size %q: want a positive integer", f)
		}
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return nil, fmt.Errorf("no fleet size in %q", s)
	}
	return ks, nil
}

// MemberAPIServersEnv sets how many member kube-apiservers carry the K
// Clusters at most (`make scale MEMBER_APISERVERS=N`); default
// DefaultMemberAPIServers.
const MemberAPIServersEnv = "SCALE_MEMBER_APISERVERS"

// DefaultMemberAPIServers is a few, the same for every K past the
// smallest, so that the curve over K is the Clusters' cost and not the
// servers'. The price: a Cluster's informers see every other Cluster's
// objects on its kube-apiserver, K²/n watch events a round.
const DefaultMemberAPIServers = 3

// ParseMemberAPIServers reads MemberAPIServersEnv: empty is
// DefaultMemberAPIServers.
func ParseMemberAPIServers(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultMemberAPIServers, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a positive integer", MemberAPIServersEnv, s)
	}
	return n, nil
}

// APIServers is how many member kube-apiservers carry K Clusters when at
// most max may: no more than there are Clusters.
func APIServers(k, max int) int { return min(k, max) }

// Parallel runs f(0..n-1) with at most limit at a time and returns every
// error joined. It stands in for errgroup, which holdfast does not
// require directly.
func Parallel(n, limit int, f func(i int) error) error {
	sem := make(chan struct{}, max(limit, 1))
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ControllerManagerFlagsEnv adds flags to both builds' controller-manager
// (`make scale CONTROLLER_MANAGER_FLAGS="--rate-limiter-qps=100 ..."`):
// what a fleet's operator would tune, to see what bounds recovery. The
// report names them; figures measured with other flags are not merged.
const ControllerManagerFlagsEnv = "SCALE_CONTROLLER_MANAGER_FLAGS"

// ParseControllerManagerFlags reads ControllerManagerFlagsEnv: flags
// separated by spaces, each --name=value (a value in the next word would
// be read as a flag of its own). The status period has its own knob, which
// the report's bound is computed from.
func ParseControllerManagerFlags(s string) ([]string, error) {
	var flags []string
	for _, f := range strings.Fields(s) {
		name, _, ok := strings.Cut(f, "=")
		if !ok || !strings.HasPrefix(name, "--") {
			return nil, fmt.Errorf("%s: %q: want each flag as --name=value", ControllerManagerFlagsEnv, f)
		}
		if name == "--cluster-status-update-frequency" {
			return nil, fmt.Errorf("%s: %q: set the status period with STATUS_PERIOD (%s), which the recovery bound is computed from", ControllerManagerFlagsEnv, f, StatusPeriodEnv)
		}
		flags = append(flags, f)
	}
	return flags, nil
}
