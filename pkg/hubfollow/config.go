package hubfollow

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// Environment variables tuning the follower (upstream HA branch's names).
const (
	EnvResolveInterval     = "HUB_RESOLVE_INTERVAL"
	EnvResolveTimeout      = "HUB_RESOLVE_TIMEOUT"
	EnvSwitchConfirmations = "HUB_SWITCH_CONFIRMATIONS"
	// EnvClusterName and EnvProjectNamespace locate the worker's own Cluster
	// CR on a hub; worker-operator v1.6.4 already reads both.
	EnvClusterName      = "CLUSTER_NAME"
	EnvProjectNamespace = "HUB_PROJECT_NAMESPACE"
)

// Defaults are upstream's HA branch's, kept so one set of manifests works with
// either build.
const (
	// DefaultResolveInterval is the wait between the end of one round of
	// polls and the start of the next once running.
	// A follower needs DefaultSwitchConfirmations polls to move, so it follows
	// a failover ~20s after the Standby publishes; that is small next to a
	// controller promotion and costs each hub one GET per worker per 10s.
	DefaultResolveInterval = 10 * time.Second
	// DefaultResolveTimeout bounds every read of a hub. A healthy API server
	// answers a GET in milliseconds; 5s rides out a slow one while keeping a
	// round well inside the interval (without a bound, an API server that
	// accepts and never answers holds a read until the OS TCP timeout).
	DefaultResolveTimeout = 5 * time.Second
	// DefaultSwitchConfirmations is how many consecutive polls must name the
	// same new hub before the worker moves: 2 is the smallest number that
	// stops one divergent poll from moving a worker.
	DefaultSwitchConfirmations = 2
)

// Config is the follower's configuration. Zero durations and counts take the
// documented defaults, so a hand-built Config needs only the connections and
// the Cluster CR's location.
type Config struct {
	// Primary is the hub configured by HUB_HOST_ENDPOINT; it is used when no
	// hub publishes a usable claim, exactly as v1.6.4 uses it.
	Primary Connection
	// Secondary is the other hub; an empty Endpoint turns the feature off.
	Secondary Connection
	// ClusterName and ProjectNamespace locate this worker's Cluster CR on each
	// hub (CLUSTER_NAME, HUB_PROJECT_NAMESPACE).
	ClusterName      string
	ProjectNamespace string
	// ResolveInterval is the wait from the end of one round of polls to the
	// start of the next (HUB_RESOLVE_INTERVAL, default 10s).
	ResolveInterval time.Duration
	// ResolveTimeout bounds each read of one hub (HUB_RESOLVE_TIMEOUT,
	// default 5s).
	ResolveTimeout time.Duration
	// SwitchConfirmations is how many consecutive polls must name the same new
	// hub before the worker switches (HUB_SWITCH_CONFIRMATIONS, default 2).
	SwitchConfirmations int
}

// ConfigFromEnv reads the configuration with upstream's variable names and
// defaults. An unset or empty tuning variable is its default; one that is set
// and invalid is an error naming the variable, its value and what is
// accepted, and the worker stops. That is the own-credential guard's policy
// for its OWN_CREDENTIAL_GUARD_* variables, applied the same way: every
// variable is checked even with following off, because a typo that is
// silently replaced by a default is only noticed the day failover is needed.
// A secondary hub that cannot work (same hub as the primary, unusable URL,
// Cluster CR not locatable) is not an error: it turns the feature off with
// one message saying why, leaving the worker exactly as v1.6.4 would run it.
func ConfigFromEnv(lookup LookupEnvFunc, log logr.Logger) (Config, error) {
	cfg := Config{
		Primary:             PrimaryFromEnv(lookup),
		Secondary:           SecondaryFromEnv(lookup),
		ClusterName:         getEnv(lookup, EnvClusterName),
		ProjectNamespace:    getEnv(lookup, EnvProjectNamespace),
		ResolveInterval:     DefaultResolveInterval,
		ResolveTimeout:      DefaultResolveTimeout,
		SwitchConfirmations: DefaultSwitchConfirmations,
	}
	var problems []string
	invalid := func(key, raw, want string) {
		problems = append(problems, fmt.Sprintf("%s=%q: want %s", key, raw, want))
	}
	duration := func(key string, dst *time.Duration, example string) {
		raw, ok := lookup(key)
		if !ok || raw == "" {
			return
		}
		d, err := time.ParseDuration(raw)
		if err != nil || d <= 0 {
			invalid(key, raw, "a positive Go duration such as "+example)
			return
		}
		*dst = d
	}
	duration(EnvResolveInterval, &cfg.ResolveInterval, "10s")
	duration(EnvResolveTimeout, &cfg.ResolveTimeout, "5s")
	if raw, ok := lookup(EnvSwitchConfirmations); ok && raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n <= 0 {
			invalid(EnvSwitchConfirmations, raw, "a positive whole number such as 2")
		} else {
			cfg.SwitchConfirmations = n
		}
	}
	if len(problems) > 0 {
		// One line for the log however many variables are wrong, worded as
		// the guard's so one grep finds either.
		return Config{}, fmt.Errorf("invalid hub follower setting: %s (unset means the default)",
			strings.Join(problems, "; "))
	}
	if cfg.Secondary.Endpoint == "" {
		return cfg, nil
	}
	if reason := cfg.disabledReason(); reason != "" {
		log.Error(nil, "Hub failover following is OFF; the worker stays on the primary hub", "reason", reason)
		return cfg, nil
	}
	if cfg.ResolveTimeout >= cfg.ResolveInterval {
		// Allowed, not refused (drop-in rule: a value upstream's HA
		// branch runs with must not stop this worker starting): the next
		// round waits one interval after the current one ends, so a long
		// timeout neither piles up reads nor brings two confirmations
		// closer than an interval; it only lengthens the time between
		// polls while a hub hangs, by more than the interval itself.
		// Worth saying once.
		log.Info("Hub resolve timeout is not shorter than the interval; while a hub hangs, polls are the interval plus the timeout apart",
			EnvResolveTimeout, cfg.ResolveTimeout.String(), EnvResolveInterval, cfg.ResolveInterval.String())
	}
	return cfg, nil
}

// Enabled reports whether the worker follows hub failover. It is false when
// HUB_SECONDARY_HOST_ENDPOINT is unset (every non-HA deployment) and when the
// secondary cannot work; then Start builds nothing and contacts nobody.
func (c Config) Enabled() bool {
	return c.disabledReason() == ""
}

// disabledReason says why the feature is off, or "" when it is on.
func (c Config) disabledReason() string {
	if c.Secondary.Endpoint == "" {
		return EnvSecondaryEndpoint + " is not set"
	}
	primary, err := normalizeEndpoint(c.Primary.Endpoint)
	if err != nil {
		return fmt.Sprintf("%s %q cannot be compared with hub claims: %v", EnvPrimaryEndpoint, redactEndpoint(c.Primary.Endpoint), err)
	}
	secondary, err := normalizeEndpoint(c.Secondary.Endpoint)
	if err != nil {
		return fmt.Sprintf("%s %q cannot be used: %v", EnvSecondaryEndpoint, redactEndpoint(c.Secondary.Endpoint), err)
	}
	if primary == secondary {
		return fmt.Sprintf("%s names the same hub as %s (%s); set it to the other hub's endpoint", EnvSecondaryEndpoint, EnvPrimaryEndpoint, primary)
	}
	if c.ClusterName == "" {
		return EnvClusterName + " is empty, so this worker's Cluster CR cannot be located on the hubs"
	}
	if c.ProjectNamespace == "" {
		return EnvProjectNamespace + " is empty, so this worker's Cluster CR cannot be located on the hubs"
	}
	return ""
}

// withDefaults fills zero or negative tuning values with the defaults.
func (c Config) withDefaults() Config {
	if c.ResolveInterval <= 0 {
		c.ResolveInterval = DefaultResolveInterval
	}
	if c.ResolveTimeout <= 0 {
		c.ResolveTimeout = DefaultResolveTimeout
	}
	if c.SwitchConfirmations <= 0 {
		c.SwitchConfirmations = DefaultSwitchConfirmations
	}
	return c
}
