package membercred

import (
	"errors"
	"fmt"
	"math"
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

// NoGuardMinDuration, as OwnCredentialGuardOptions.MinDuration, removes the
// minimum duration and its jitter: the guard trips as soon as Threshold
// strikes span at most Window, so Threshold 1 acts on the first persisting
// 401 (KAI-Scheduler's behaviour, which the defaults avoid on purpose). It
// cannot be 0, which means DefaultGuardMinDuration so that the zero value
// of the options is the safe default. Its value is one no flag or
// environment variable would spell by accident; they spell it
// GuardMinDurationNone.
const NoGuardMinDuration time.Duration = math.MinInt64

// GuardMinDurationNone is how a flag or environment variable says
// NoGuardMinDuration. A word rather than "0": Karmada's
// --own-credential-guard-min-duration has always read 0 as the default
// (1m), and the worker refuses 0, so giving 0 a new meaning would change
// what an existing setting does.
const GuardMinDurationNone = "none"

// ParseGuardMinDuration parses a flag or environment value for MinDuration:
// GuardMinDurationNone, or a Go duration (0 and negative values are returned
// as they are for the caller's own check: a flag may take 0 as the default,
// and Validate names a negative one).
func ParseGuardMinDuration(s string) (time.Duration, error) {
	if s == GuardMinDurationNone {
		return NoGuardMinDuration, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("own-credential guard minimum duration %q: want a Go duration such as 1m, or %q", s, GuardMinDurationNone)
	}
	return d, nil
}

// FormatGuardMinDuration renders MinDuration for a flag's help or a startup
// log line: GuardMinDurationNone for NoGuardMinDuration, else the duration.
func FormatGuardMinDuration(d time.Duration) string {
	if d == NoGuardMinDuration {
		return GuardMinDurationNone
	}
	return d.String()
}

// GuardMinDurationValue is a flag value for MinDuration that also takes
// GuardMinDurationNone. It has the method set of pflag.Value and
// flag.Value (this package does not import pflag), with Type "duration" so
// that a flag keeps its help text when it moves from DurationVar to Var.
type GuardMinDurationValue struct{ p *time.Duration }

// NewGuardMinDurationValue stores def in *p and returns a flag value that
// sets *p.
func NewGuardMinDurationValue(p *time.Duration, def time.Duration) *GuardMinDurationValue {
	*p = def
	return &GuardMinDurationValue{p: p}
}

// Set parses s with ParseGuardMinDuration.
func (v *GuardMinDurationValue) Set(s string) error {
	d, err := ParseGuardMinDuration(s)
	if err != nil {
		return err
	}
	*v.p = d
	return nil
}

// String renders the value with FormatGuardMinDuration.
func (v *GuardMinDurationValue) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return FormatGuardMinDuration(*v.p)
}

// Type is pflag's name for the value's kind.
func (v *GuardMinDurationValue) Type() string { return "duration" }

// maxGuardJitter is the exclusive upper bound of the extra delay a guard
// draws at creation: half the minimum duration spreads replicas' exits over
// 30s with the default, far more than a pod restart takes, while never
// doubling how long a rejected process lingers.
func maxGuardJitter(minDuration time.Duration) time.Duration { return minDuration / 2 }

// OwnCredentialGuardOptions configure an OwnCredentialGuard. Zero values take
// the documented defaults.
type OwnCredentialGuardOptions struct {
	// Threshold is how many persisting 401s in a row (no other response in
	// between) trip the guard. 0 means DefaultGuardThreshold; 1 with
	// MinDuration NoGuardMinDuration reproduces exit-on-first-401 (with the
	// default MinDuration, 1 trips on the first strike that comes at least
	// MinDuration plus jitter after the run's first); negative is invalid.
	Threshold int
	// Window is the longest time the last Threshold persisting 401s may
	// span. 0 means DefaultGuardWindow; negative is invalid.
	Window time.Duration
	// MinDuration is how long a run of persisting 401s must have lasted,
	// from its first, before the guard trips; each guard adds a random
	// jitter in [0, MinDuration/2) of its own. 0 means
	// DefaultGuardMinDuration; NoGuardMinDuration means no minimum and no
	// jitter; any other negative value is invalid.
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
	if o.MinDuration < 0 && o.MinDuration != NoGuardMinDuration {
		errs = append(errs, fmt.Errorf("MinDuration must be positive (0 for the default %s, NoGuardMinDuration for none), got %s", DefaultGuardMinDuration, o.MinDuration))
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
