package karmada

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Defaults of ControllerManagerOptions, each chosen for a 2-core runner.
const (
	// DefaultStatusUpdateFrequency is how often the cluster-status
	// controller re-collects each Cluster's status (upstream: 10s). Every
	// observation the suite waits for arrives at most one period after the
	// informer saw it, so a short period keeps the suite short; 2s still
	// leaves the controller idle most of the time.
	DefaultStatusUpdateFrequency = 2 * time.Second
	// DefaultVerbosity is klog's -v. At 2 the patched binary logs when it
	// picks up a rotated member token, which the report quotes as evidence;
	// the volume stays small with two controllers running.
	DefaultVerbosity = 2
)

// controllers are the Karmada controllers a Push member's status needs:
// "cluster" (finalizer, execution namespace, health monitor) and
// "clusterStatus" (health checks through short-lived clients, node and pod
// informers through long-lived ones). Everything else stays off so that the
// logs and the API traffic are the rotation's.
var controllers = []string{"cluster", "clusterStatus"}

// ControllerManagerOptions are the flags the suite runs
// karmada-controller-manager (v1.18) with.
type ControllerManagerOptions struct {
	// Kubeconfig is the controller-manager's own credential for the Karmada
	// host (a tokenFile kubeconfig, as a pod's would be).
	Kubeconfig string
	// MetricsPort and HealthPort are 127.0.0.1 ports; upstream binds all
	// interfaces by default, which a test must not.
	MetricsPort, HealthPort int
	// StatusUpdateFrequency defaults to DefaultStatusUpdateFrequency.
	StatusUpdateFrequency time.Duration
	// Verbosity defaults to DefaultVerbosity.
	Verbosity int
	// Extra flags are appended last (for example the patched binary's
	// --own-credential-guard-* flags, which the pristine one rejects).
	Extra []string
}

// Args returns the command line arguments.
func (o ControllerManagerOptions) Args() ([]string, error) {
	if o.Kubeconfig == "" {
		return nil, fmt.Errorf("karmada-controller-manager needs a kubeconfig for the Karmada host")
	}
	if o.MetricsPort <= 0 || o.HealthPort <= 0 || o.MetricsPort == o.HealthPort {
		return nil, fmt.Errorf("karmada-controller-manager needs two distinct ports, got metrics %d and health %d", o.MetricsPort, o.HealthPort)
	}
	frequency := o.StatusUpdateFrequency
	if frequency == 0 {
		frequency = DefaultStatusUpdateFrequency
	}
	verbosity := o.Verbosity
	if verbosity == 0 {
		verbosity = DefaultVerbosity
	}
	args := []string{
		"--kubeconfig=" + o.Kubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		// One instance: leader election would only add lease traffic on the
		// host (and, when the own credential is revoked, a second way to die
		// that is not the one under test).
		"--leader-elect=false",
		"--cluster-status-update-frequency=" + frequency.String(),
		// Node and pod informers on each member exist only with resource
		// modeling (upstream's default); the suite's long-lived path is them.
		"--enable-cluster-resource-modeling=true",
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(o.MetricsPort),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(o.HealthPort),
		"--v=" + strconv.Itoa(verbosity),
	}
	return append(args, o.Extra...), nil
}
