package membercred

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// GuardAction is what the own-credential guard does when it trips.
type GuardAction string

const (
	// GuardActionExit logs one line and exits with status 1, so the kubelet
	// restarts the container and mounts a fresh ServiceAccount token. It is
	// the default: a process that cannot authenticate cannot even release
	// its leader lease, and nothing else makes it start over.
	GuardActionExit GuardAction = "exit"
	// GuardActionUnhealthy makes Checker fail (for a readiness or liveness
	// probe) until a request is accepted again, and never exits.
	GuardActionUnhealthy GuardAction = "unhealthy"
)

// ParseGuardAction parses a flag or environment value ("exit", "unhealthy").
func ParseGuardAction(s string) (GuardAction, error) {
	switch a := GuardAction(s); a {
	case GuardActionExit, GuardActionUnhealthy:
		return a, nil
	}
	return "", fmt.Errorf("unknown own-credential guard action %q, want %q or %q", s, GuardActionExit, GuardActionUnhealthy)
}

const (
	// DefaultGuardThreshold is how many 401s in a row, each persisting after
	// the credential was re-read, trip the guard. Upstream KAI-Scheduler exits
	// on the first 401, which reviewers flagged as unsafe: a token-rotation
	// race or an API server restarting with a cold authentication cache can
	// reject one request of a healthy process, and several replicas would
	// restart in lockstep. A revoked credential, on the other hand, fails
	// every request: leader election renews every 2s and reflectors relist
	// with backoff of at most 30s, so 5 arrive in about 10s with leader
	// election and within 2.5 minutes for one idle reflector at its cap.
	DefaultGuardThreshold = 5
	// DefaultGuardWindow is the longest time the last Threshold persisting
	// 401s may span. It keeps 401s that are rare and far apart (each followed
	// by nothing, e.g. a probe that fails once an hour) from adding up, and
	// is twice the slowest steady failure rate above (5 relists at the 30s
	// backoff cap = 2.5 minutes).
	DefaultGuardWindow = 5 * time.Minute
	// DefaultGuardAction is GuardActionExit.
	DefaultGuardAction = GuardActionExit
	// DefaultGuardMinDuration is how long the 401s must have persisted, from
	// the first of the run, before the guard may trip, whatever their count.
	// A count alone trips on a few seconds of trouble: leader election alone
	// renews every 2s, so 5 strikes come within 10s of an API server
	// restarting with a cold authentication cache or of a webhook
	// authenticator blip, and every replica of every controller in the fleet
	// would exit at once. That is the review's objection to exiting on the
	// first 401 (KAI-Scheduler's fix; see docs/adopting.md): a transient 401
	// is rare but not impossible, and a synchronised restart is worse than
	// the outage. A revoked credential, on the other hand, fails for good,
	// so waiting one minute costs a process that was doing nothing anyway
	// one more minute, while outlasting what the blips above last: an API
	// server restart is seconds, and its token cache holds a success for 10s.
	// Each guard adds its own jitter of up to half of it (see
	// maxGuardJitter), so replicas that see one outage do not exit together.
	DefaultGuardMinDuration = time.Minute
)

// maxGuardJitter is the exclusive upper bound of the extra delay a guard
// draws at creation: half the minimum duration spreads replicas' exits over
// 30s with the default, far more than a pod restart takes, while never
// doubling how long a rejected process lingers.
func maxGuardJitter(minDuration time.Duration) time.Duration { return minDuration / 2 }

// OwnCredentialGuardOptions configure an OwnCredentialGuard. Zero values take
// the documented defaults.
type OwnCredentialGuardOptions struct {
	// Threshold is how many persisting 401s in a row (no other response in
	// between) trip the guard. 0 means DefaultGuardThreshold; 1 reproduces
	// exit-on-first-401; negative is invalid.
	Threshold int
	// Window is the longest time the last Threshold persisting 401s may
	// span. 0 means DefaultGuardWindow; negative is invalid.
	Window time.Duration
	// MinDuration is how long a run of persisting 401s must have lasted,
	// from its first, before the guard trips; each guard adds a random
	// jitter in [0, MinDuration/2) of its own. 0 means
	// DefaultGuardMinDuration; negative is invalid.
	MinDuration time.Duration
	// Action is what happens when the guard trips. "" means
	// DefaultGuardAction.
	Action GuardAction
	// Exit ends the process for GuardActionExit. nil means flush klog, then
	// os.Exit. Tests inject a recorder.
	Exit func(code int)
	// Metrics records the guard's counters. nil records nothing.
	Metrics *Metrics
	// Logger receives the trip line and state changes. The zero value (and
	// logr.Discard(), which is the same value) means klog.Background().
	Logger logr.Logger
	// Clock tells the time. nil means the real clock.
	Clock clock.PassiveClock
}

// Validate reports every bad field by name, so Karmada's pflags or the
// worker's environment parsing can reject bad values at startup.
func (o OwnCredentialGuardOptions) Validate() error {
	var errs []error
	if o.Threshold < 0 {
		errs = append(errs, fmt.Errorf("Threshold must be at least 1 (0 for the default %d), got %d", DefaultGuardThreshold, o.Threshold))
	}
	if o.Window < 0 {
		errs = append(errs, fmt.Errorf("Window must be positive (0 for the default %s), got %s", DefaultGuardWindow, o.Window))
	}
	if o.MinDuration < 0 {
		errs = append(errs, fmt.Errorf("MinDuration must be positive (0 for the default %s), got %s", DefaultGuardMinDuration, o.MinDuration))
	}
	if o.Action != "" {
		if _, err := ParseGuardAction(string(o.Action)); err != nil {
			errs = append(errs, fmt.Errorf("Action: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (o OwnCredentialGuardOptions) withDefaults() OwnCredentialGuardOptions {
	if o.Threshold == 0 {
		o.Threshold = DefaultGuardThreshold
	}
	if o.Window == 0 {
		o.Window = DefaultGuardWindow
	}
	if o.MinDuration == 0 {
		o.MinDuration = DefaultGuardMinDuration
	}
	if o.Action == "" {
		o.Action = DefaultGuardAction
	}
	if o.Exit == nil {
		o.Exit = func(code int) {
			klog.Flush() // the one line explaining the exit must reach the log
			os.Exit(code)
		}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = klog.Background()
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}
