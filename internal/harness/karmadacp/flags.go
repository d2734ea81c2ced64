package karmadacp

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// Defaults chosen for a 2-core runner.
const (
	// DefaultStatusUpdateFrequency is the controller-manager's
	// --cluster-status-update-frequency (upstream: 10s): everything a
	// scenario waits for on a Cluster's status arrives at most one period
	// after it happened.
	DefaultStatusUpdateFrequency = 2 * time.Second
	// DefaultVerbosity is klog's -v for the Karmada components: 2 logs
	// what a scenario quotes (the patched binary's rotated-token pickup,
	// the execution controller's applies) without burying it.
	DefaultVerbosity = 2
)

// frontProxyFlags are what karmada-apiserver needs on top of
// internal/harness/controlplane's kube-apiserver flags for the aggregation
// layer: upstream's artifacts/deploy/karmada-apiserver.yaml sets the same
// request-header and proxy-client flags. --enable-aggregator-routing stays
// off: with it the aggregator dials a Service's Endpoints, which may not
// hold a loopback address; without it, an ExternalName Service's name
// (AggregatedAPIService).
func frontProxyFlags(p *pki) []string {
	return []string{
		"--requestheader-client-ca-file=" + p.frontProxyCAFile(),
		"--requestheader-allowed-names=" + frontProxyClientName,
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--proxy-client-cert-file=" + p.frontProxyCertFile(),
		"--proxy-client-key-file=" + p.frontProxyKeyFile(),
	}
}

func hostPort(port int) string { return net.JoinHostPort(loopback, strconv.Itoa(port)) }

// aggregatedArgs are karmada-aggregated-apiserver's flags: upstream's
// Deployment (artifacts/deploy/karmada-aggregated-apiserver.yaml) less the
// etcd TLS (etcd listens on loopback in plain HTTP, as for kube-apiserver)
// and the audit log, bound to 127.0.0.1. It stores Clusters in Karmada's
// etcd beside kube-apiserver's objects, as upstream does.
func aggregatedArgs(kubeconfig, etcd string, p *pki, port, verbosity int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--etcd-servers=" + etcd,
		"--bind-address=" + loopback,
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + p.aggregatedCertFile(),
		"--tls-private-key-file=" + p.aggregatedKeyFile(),
		"--v=" + strconv.Itoa(verbosity),
	}
}

// webhookArgs are karmada-webhook's flags (artifacts/deploy/karmada-webhook.yaml
// less the feature gates, which stay at their defaults), every listener on
// 127.0.0.1.
func webhookArgs(kubeconfig string, p *pki, port, metricsPort, healthPort, verbosity int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--bind-address=" + loopback,
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + p.webhookCertDir(),
		"--metrics-bind-address=" + hostPort(metricsPort),
		"--health-probe-bind-address=" + hostPort(healthPort),
		"--v=" + strconv.Itoa(verbosity),
	}
}

// schedulerArgs are karmada-scheduler's flags: no scheduler estimator
// (upstream's default; the deploy script's estimator needs one per member
// cluster, which this harness does not run), one instance so no leader
// election, listeners on 127.0.0.1.
func schedulerArgs(kubeconfig string, metricsPort, healthPort, verbosity int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--enable-scheduler-estimator=false",
		"--metrics-bind-address=" + hostPort(metricsPort),
		"--health-probe-bind-address=" + hostPort(healthPort),
		"--v=" + strconv.Itoa(verbosity),
	}
}

// ControllerManagerOptions are the flags karmada-controller-manager runs
// with. There is no --controllers: it runs upstream's default controller
// set ("*": every controller but hpaScaleTargetMarker and
// deploymentReplicasSyncer).
type ControllerManagerOptions struct {
	// StatusUpdateFrequency defaults to DefaultStatusUpdateFrequency.
	StatusUpdateFrequency time.Duration
	// Verbosity defaults to DefaultVerbosity.
	Verbosity int
	// Extra flags are appended last (e.g. a patched binary's own-credential
	// guard flags, which the pristine one rejects).
	Extra []string
}

func (o ControllerManagerOptions) args(kubeconfig string, metricsPort, healthPort int) ([]string, error) {
	if kubeconfig == "" {
		return nil, fmt.Errorf("karmada-controller-manager needs a kubeconfig for karmada-apiserver")
	}
	if metricsPort <= 0 || healthPort <= 0 || metricsPort == healthPort {
		return nil, fmt.Errorf("karmada-controller-manager needs two distinct ports, got metrics %d and health %d", metricsPort, healthPort)
	}
	frequency := o.StatusUpdateFrequency
	if frequency == 0 {
		frequency = DefaultStatusUpdateFrequency
	}
	if frequency < 0 {
		return nil, fmt.Errorf("karmada-controller-manager: negative status update frequency %s", frequency)
	}
	verbosity := o.Verbosity
	if verbosity == 0 {
		verbosity = DefaultVerbosity
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		// One instance: leader election would only add lease traffic.
		"--leader-elect=false",
		"--cluster-status-update-frequency=" + frequency.String(),
		"--metrics-bind-address=" + hostPort(metricsPort),
		"--health-probe-bind-address=" + hostPort(healthPort),
		"--v=" + strconv.Itoa(verbosity),
	}
	return append(args, o.Extra...), nil
}
