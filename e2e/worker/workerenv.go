package worker

import (
	"sort"
	"strconv"
	"time"
)

// hubAccess is what the worker needs to reach one hub: the hub's API server
// URL, the file holding the token that hub minted for the worker, and the
// file holding the CA that verifies the hub's serving certificate. The three
// travel together, as they do in the worker (hubfollow.Connection).
type hubAccess struct {
	Endpoint  string
	TokenFile string
	CAFile    string
}

// guardSettings tunes the own-credential guard (worker-operator.md). The zero
// value leaves the worker's defaults.
type guardSettings struct {
	// Action is OWN_CREDENTIAL_GUARD_ACTION as written, valid or not.
	Action      string
	Threshold   int
	Window      time.Duration
	MinDuration time.Duration
}

// workerSettings is the complete configuration of one worker-operator
// process. env renders it as the process's whole environment: nothing is
// inherited from the test's environment, so a KUBECONFIG or HUB_* variable
// of the person running the suite cannot leak into a scenario.
type workerSettings struct {
	// Kubeconfig is the worker cluster's kubeconfig; its user reads a
	// tokenFile, as a pod's projected ServiceAccount token is read.
	Kubeconfig       string
	ClusterName      string
	ProjectNamespace string
	// PodNamespace is where the worker runs on the worker cluster (its
	// events go there).
	PodNamespace string
	// Home is a private $HOME for the process.
	Home string

	Primary hubAccess
	// Secondary is the Standby hub. nil leaves every HUB_SECONDARY_*
	// variable unset. A Secondary with an empty Endpoint sets the token and
	// CA files but not HUB_SECONDARY_HOST_ENDPOINT: the feature is off
	// although a Standby credential is mounted.
	Secondary *hubAccess

	ResolveInterval     time.Duration
	ResolveTimeout      time.Duration
	SwitchConfirmations int

	Guard guardSettings
}

// Environment variable names, as DESIGN.md ("Worker environment") and
// worker-operator.md list them.
const (
	envKubeconfig          = "KUBECONFIG"
	envClusterName         = "CLUSTER_NAME"
	envProjectNamespace    = "HUB_PROJECT_NAMESPACE"
	envPodNamespace        = "POD_NAMESPACE"
	envEnableWebhooks      = "ENABLE_WEBHOOKS"
	envHubEndpoint         = "HUB_HOST_ENDPOINT"
	envHubTokenFile        = "HUB_TOKEN_FILE"
	envHubCAFile           = "HUB_CA_FILE"
	envSecondaryEndpoint   = "HUB_SECONDARY_HOST_ENDPOINT"
	envSecondaryTokenFile  = "HUB_SECONDARY_TOKEN_FILE"
	envSecondaryCAFile     = "HUB_SECONDARY_CA_FILE"
	envResolveInterval     = "HUB_RESOLVE_INTERVAL"
	envResolveTimeout      = "HUB_RESOLVE_TIMEOUT"
	envSwitchConfirmations = "HUB_SWITCH_CONFIRMATIONS"
	envGuardAction         = "OWN_CREDENTIAL_GUARD_ACTION"
	envGuardThreshold      = "OWN_CREDENTIAL_GUARD_THRESHOLD"
	envGuardWindow         = "OWN_CREDENTIAL_GUARD_WINDOW"
	envGuardMinDuration    = "OWN_CREDENTIAL_GUARD_MIN_DURATION"
)

// env returns the process environment, sorted so a logged environment reads
// the same on every run. Only file names appear in it, never a token.
func (s workerSettings) env() []string {
	vars := map[string]string{
		envKubeconfig:       s.Kubeconfig,
		envClusterName:      s.ClusterName,
		envProjectNamespace: s.ProjectNamespace,
		envPodNamespace:     s.PodNamespace,
		// There is no webhook certificate on loopback, and no webhook is under test.
		envEnableWebhooks: "false",
		"HOME":            s.Home,
		envHubEndpoint:    s.Primary.Endpoint,
		envHubTokenFile:   s.Primary.TokenFile,
		envHubCAFile:      s.Primary.CAFile,
	}
	if s.Secondary != nil {
		if s.Secondary.Endpoint != "" {
			vars[envSecondaryEndpoint] = s.Secondary.Endpoint
		}
		vars[envSecondaryTokenFile] = s.Secondary.TokenFile
		vars[envSecondaryCAFile] = s.Secondary.CAFile
	}
	if s.ResolveInterval > 0 {
		vars[envResolveInterval] = s.ResolveInterval.String()
	}
	if s.ResolveTimeout > 0 {
		vars[envResolveTimeout] = s.ResolveTimeout.String()
	}
	if s.SwitchConfirmations > 0 {
		vars[envSwitchConfirmations] = strconv.Itoa(s.SwitchConfirmations)
	}
	if s.Guard.Action != "" {
		vars[envGuardAction] = s.Guard.Action
	}
	if s.Guard.Threshold > 0 {
		vars[envGuardThreshold] = strconv.Itoa(s.Guard.Threshold)
	}
	if s.Guard.MinDuration > 0 {
		vars[envGuardMinDuration] = s.Guard.MinDuration.String()
	}
	if s.Guard.Window > 0 {
		vars[envGuardWindow] = s.Guard.Window.String()
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// workerArgs are the worker's flags: metrics on a loopback port the test
// scrapes, and no health probe server (nothing here probes it, and one
// fixed port less cannot collide with a parallel suite).
func workerArgs(metricsAddr string) []string {
	return []string{
		"--metrics-bind-address=" + metricsAddr,
		"--health-probe-bind-address=0",
	}
}
